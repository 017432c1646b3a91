-- A parked run anyone can claim (issue 25 item 1): the run's inputs as the
-- queue may show them (JSON, sensitive ones masked), a redacted summary of
-- the screen it parked on, and the address of the session relay of the
-- worker that holds the session ('' when nobody holds it live).
ALTER TABLE interventions ADD COLUMN inputs     TEXT;
ALTER TABLE interventions ADD COLUMN screen     TEXT NOT NULL DEFAULT '';
ALTER TABLE interventions ADD COLUMN relay_addr TEXT NOT NULL DEFAULT '';

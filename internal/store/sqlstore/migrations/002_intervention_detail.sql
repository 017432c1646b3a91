-- Why a session waits, so a restarted console can say it: the capability,
-- the step it stopped at, its failure code, the effects sent so far (JSON)
-- and a redacted summary.
ALTER TABLE interventions ADD COLUMN capability   TEXT NOT NULL DEFAULT '';
ALTER TABLE interventions ADD COLUMN step         TEXT NOT NULL DEFAULT '';
ALTER TABLE interventions ADD COLUMN failure_code TEXT NOT NULL DEFAULT '';
ALTER TABLE interventions ADD COLUMN effects      TEXT;
ALTER TABLE interventions ADD COLUMN summary      TEXT NOT NULL DEFAULT '';

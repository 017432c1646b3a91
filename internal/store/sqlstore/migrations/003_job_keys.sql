-- Idempotency keys of queued runs: bound for ever to the job that first
-- used the key and a digest of its inputs and target; a person's "not
-- landed" verdict releases the key for one new job (the generation moves).
CREATE TABLE job_keys (
	capability_id TEXT NOT NULL,
	key           TEXT NOT NULL,
	inputs_digest TEXT NOT NULL,
	job_id        {{.BigInt}} NOT NULL DEFAULT 0,
	generation    {{.BigInt}} NOT NULL DEFAULT 0,
	created_at    {{.Time}} NOT NULL,
	released_at   {{.Time}},
	released_by   TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (capability_id, key)
);
CREATE INDEX job_keys_job ON job_keys (job_id);

-- A run's outputs, so an idempotent repeat and a rescued job answer with
-- them without reading the evidence tree.
ALTER TABLE runs ADD COLUMN outputs TEXT;
-- A digest of the inputs a run was given (per input, a salted hash; never
-- a sensitive one), so a run-level idempotency key with other inputs is
-- refused instead of answered with the first run.
ALTER TABLE runs ADD COLUMN inputs_digest TEXT NOT NULL DEFAULT '';

-- A person's verdict on an intervention: landed or not_landed, who, why.
ALTER TABLE interventions ADD COLUMN verdict     TEXT NOT NULL DEFAULT '';
ALTER TABLE interventions ADD COLUMN resolved_by TEXT NOT NULL DEFAULT '';
ALTER TABLE interventions ADD COLUMN note        TEXT NOT NULL DEFAULT '';

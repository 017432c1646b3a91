-- Heal proposals (issue 29): a draft next version that changes only how a
-- step finds its target, its review history, and the version of each
-- healed capability id that "ID@active" runs. The proposal and the active
-- record are internal/heal's JSON; the store filters on id, capability id
-- and state only.
CREATE TABLE heal_proposals (
	id            TEXT PRIMARY KEY,
	capability_id TEXT NOT NULL,
	state         TEXT NOT NULL,
	created_at    {{.Time}} NOT NULL,
	updated_at    {{.Time}} NOT NULL,
	doc           TEXT NOT NULL
);
CREATE INDEX heal_proposals_capability ON heal_proposals (capability_id, created_at);
CREATE TABLE heal_transitions (
	seq         {{.Serial}},
	proposal_id TEXT NOT NULL REFERENCES heal_proposals (id),
	at          {{.Time}} NOT NULL,
	doc         TEXT NOT NULL
);
CREATE INDEX heal_transitions_proposal ON heal_transitions (proposal_id, seq);
CREATE TABLE heal_active (
	capability_id TEXT PRIMARY KEY,
	updated_at    {{.Time}} NOT NULL,
	doc           TEXT NOT NULL
);

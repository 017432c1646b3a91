-- One row per capability id: the catalog lists capabilities from here and
-- every version points at it.
CREATE TABLE capabilities (
	id         TEXT PRIMARY KEY,
	created_at {{.Time}} NOT NULL
);

-- Immutable versions: one content hash per id@version (the primary key) and
-- one id@version per content hash (unique), with the bytes as added, so
-- prerequisites and remedies resolve by pinned hash.
CREATE TABLE capability_versions (
	capability_id TEXT NOT NULL REFERENCES capabilities (id),
	version       TEXT NOT NULL,
	content_hash  TEXT NOT NULL UNIQUE,
	status        TEXT NOT NULL CHECK (status IN ('draft', 'sealed')),
	body          {{.Blob}} NOT NULL,
	created_at    {{.Time}} NOT NULL,
	PRIMARY KEY (capability_id, version)
);

-- Approvals bind one version's content hash to an approver, a note, an
-- expiry and the input bounds they cover; a one-off approval carries its
-- exact inputs and the run that consumed it.
CREATE TABLE approvals (
	id            TEXT PRIMARY KEY,
	capability_id TEXT NOT NULL,
	version       TEXT NOT NULL,
	content_hash  TEXT NOT NULL,
	approver      TEXT NOT NULL,
	note          TEXT NOT NULL DEFAULT '',
	created_at    {{.Time}} NOT NULL,
	expires_at    {{.Time}},
	bounds        TEXT NOT NULL DEFAULT '{}',
	once          {{call .Flag "once"}},
	inputs        TEXT,
	consumed_by   TEXT,
	consumed_at   {{.Time}},
	revoked_at    {{.Time}},
	FOREIGN KEY (capability_id, version) REFERENCES capability_versions (capability_id, version)
);
CREATE INDEX approvals_version ON approvals (capability_id, version);
CREATE INDEX approvals_hash ON approvals (content_hash);

-- The run index: one row per run, the evidence stays on disk. No foreign key
-- to versions: a capability file replayed during development is indexed too.
CREATE TABLE runs (
	id                      TEXT PRIMARY KEY,
	capability_id           TEXT NOT NULL,
	version                 TEXT NOT NULL DEFAULT '',
	content_hash            TEXT NOT NULL,
	status                  TEXT NOT NULL,
	outcome                 TEXT NOT NULL DEFAULT '',
	failure_code            TEXT NOT NULL DEFAULT '',
	effects                 TEXT,
	started_at              {{.Time}} NOT NULL,
	ended_at                {{.Time}},
	evidence_path           TEXT NOT NULL DEFAULT '',
	idempotency_key         TEXT NOT NULL DEFAULT '',
	approval_id             TEXT NOT NULL DEFAULT '',
	unauthorized_dispatches INTEGER NOT NULL DEFAULT 0,
	eval                    {{call .Flag "eval"}}
);
CREATE INDEX runs_started ON runs (started_at);
CREATE INDEX runs_capability ON runs (capability_id, started_at);
CREATE INDEX runs_eval ON runs (content_hash, eval, status);

-- Idempotency keys: the first run to claim key for a capability owns it.
CREATE TABLE idempotency_keys (
	capability_id TEXT NOT NULL,
	key           TEXT NOT NULL,
	run_id        TEXT NOT NULL REFERENCES runs (id),
	created_at    {{.Time}} NOT NULL,
	PRIMARY KEY (capability_id, key)
);

-- Leases: who may act on a session, at which epoch, until when.
CREATE TABLE leases (
	session_id TEXT PRIMARY KEY,
	holder     TEXT NOT NULL,
	epoch      {{.BigInt}} NOT NULL,
	expires_at {{.Time}} NOT NULL,
	updated_at {{.Time}} NOT NULL
);

-- The intervention queue: sessions handed to a human.
CREATE TABLE interventions (
	id          TEXT PRIMARY KEY,
	session_id  TEXT NOT NULL,
	run_id      TEXT NOT NULL DEFAULT '',
	reason      TEXT NOT NULL,
	status      TEXT NOT NULL CHECK (status IN ('open', 'claimed', 'resolved')),
	created_at  {{.Time}} NOT NULL,
	claimed_by  TEXT NOT NULL DEFAULT '',
	claimed_at  {{.Time}},
	resolved_at {{.Time}},
	resolution  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX interventions_status ON interventions (status, created_at);

-- Principals (issue 23 item 2): the people and services that act on cua,
-- each a name, a role and the hash of its secret (computed by the principal
-- package, opaque here), with who added it, whether it is disabled, and the
-- failed sign-ins that lock it for a while. An approval also records who
-- revoked it.
CREATE TABLE principals (
	name            TEXT PRIMARY KEY,
	role            TEXT NOT NULL,
	secret_hash     TEXT NOT NULL,
	created_at      {{.Time}} NOT NULL,
	created_by      TEXT NOT NULL,
	disabled_at     {{.Time}},
	failed_sign_ins INTEGER NOT NULL DEFAULT 0,
	locked_until    {{.Time}}
);
ALTER TABLE approvals ADD COLUMN revoked_by TEXT NOT NULL DEFAULT '';

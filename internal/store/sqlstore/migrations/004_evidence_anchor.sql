-- A run's evidence anchor (invariant 18): the chain head of its bundle's
-- hash-chained event log and the deployment key's signature of its
-- manifest, kept outside the bundle so a rewritten bundle no longer matches
-- the store. Empty until the run ends; an unsigned bundle has no signature.
ALTER TABLE runs ADD COLUMN chain_head TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN signature  TEXT NOT NULL DEFAULT '';

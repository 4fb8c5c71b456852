-- 0002: leave 15% of each heap page for updates of its rows. The rows a
-- run rewrites (its checkpoint, its task records) then get their new
-- version on the same page (a heap-only update: no new index entry), as
-- long as that page has room. Pages written before the migration keep
-- their fill. CockroachDB accepts and ignores the setting.
ALTER TABLE weft_kv SET (fillfactor = 85);

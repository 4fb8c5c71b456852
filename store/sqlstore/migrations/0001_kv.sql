-- 0001: the key-value table and its version sequence.
-- Versions come from one sequence, so a key's version never repeats, even
-- after the key is deleted and written again. Only equality is meaningful.
CREATE SEQUENCE IF NOT EXISTS weft_kv_version;

CREATE TABLE IF NOT EXISTS weft_kv (
    k BYTEA PRIMARY KEY,
    v BYTEA NOT NULL,
    version INT8 NOT NULL
);

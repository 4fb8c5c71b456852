-- 0003: the sequence each store draws its node number from, once when it
-- opens: a put's version is the store's own clock tick and node number
-- (versions.go), where it was drawn from weft_kv_version, one row every put
-- of the cluster incremented. weft_kv_version stays for processes of an
-- older version still running during an upgrade.
CREATE SEQUENCE IF NOT EXISTS weft_store_node;

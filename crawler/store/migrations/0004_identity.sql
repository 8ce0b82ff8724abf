-- The store's identity (the `store` crate's PostgreSQL backend), version 4.
--
-- Search index replicas remember which store their index was built from, and rebuild it when
-- the store is another one. The identity is this row's value with the table OID of the change
-- counter: a store restored from a dump into a new database, or over the old one with its
-- tables dropped and created again (pg_restore --clean), has new tables, so replicas rebuild
-- rather than take the restored change log for a continuation of the one they followed.
CREATE TABLE store_identity (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    id text NOT NULL
);
INSERT INTO store_identity (singleton, id)
    VALUES (true, md5(random()::text || clock_timestamp()::text));

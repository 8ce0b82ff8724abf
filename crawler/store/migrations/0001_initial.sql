-- The crawl state (the `store` crate's PostgreSQL backend), version 1.
--
-- Text keys use the "C" collation, so that ids and domains sort bytewise, as the embedded
-- store sorts them, and a domain's records are one key range: ids `{domain}/…` lie between
-- `{domain}/` and `{domain}0`.

-- The single change counter. Every transaction that logs a change locks this row first and
-- keeps the lock until it commits, so change numbers are handed out in commit order (see the
-- `postgres` module's documentation).
CREATE TABLE change_counter (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    last_seq bigint NOT NULL CHECK (last_seq >= 0)
);
INSERT INTO change_counter (singleton, last_seq) VALUES (true, 0);

-- One row per record, tombstones included. `record` is the JSON of the crate's
-- `StoredRecord`, byte for byte what the embedded store keeps; the other columns repeat what
-- queries select on. `seq` is the record's latest change: the change log is this column.
CREATE TABLE records (
    id text COLLATE "C" PRIMARY KEY,
    index_url text NOT NULL,
    removed boolean NOT NULL,
    seq bigint NOT NULL UNIQUE CHECK (seq > 0),
    record bytea NOT NULL
);

-- One row per domain ever crawled: the JSON of `DomainStatus`.
CREATE TABLE domains (
    domain text COLLATE "C" PRIMARY KEY,
    status bytea NOT NULL
);

-- HTTP cache entries by URL: the JSON of `CacheEntry`.
CREATE TABLE http_cache (
    url text COLLATE "C" PRIMARY KEY,
    entry bytea NOT NULL
);

-- Content-addressed bytes: `digest` is the SHA-256 of `bytes`, in lowercase hex.
CREATE TABLE blobs (
    digest text COLLATE "C" PRIMARY KEY CHECK (digest ~ '^[0-9a-f]{64}$'),
    bytes bytea NOT NULL
);
-- Blobs are mostly compressed archives and short texts: stored out of line without
-- PostgreSQL's own compression, which would spend CPU for little.
ALTER TABLE blobs ALTER COLUMN bytes SET STORAGE EXTERNAL;

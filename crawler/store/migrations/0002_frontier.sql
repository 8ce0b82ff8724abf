-- The shared crawl frontier (the `store` crate's PostgreSQL backend), version 2.
--
-- One row per domain that crawl workers share. A worker leases due rows in batches
-- (`SELECT … FOR UPDATE SKIP LOCKED`), sets `lease_owner` and `lease_until`, renews the lease
-- while it crawls, and on finishing stores the domain's results, then clears the lease and
-- sets `next_crawl_at`. A row whose lease has expired (its worker died) is due again. Every
-- time here is the database's clock (`now()`), never a worker's.
CREATE TABLE frontier (
    -- The domain key one crawl target stands for (`SeedTarget::domain`).
    domain text COLLATE "C" PRIMARY KEY,
    -- The seed line to crawl for it (an origin, an origin with a path, or an MCP endpoint).
    target text NOT NULL,
    -- When the domain is due: a row is leased only once this has passed.
    next_crawl_at timestamptz NOT NULL DEFAULT now(),
    -- The worker that holds the row, until `lease_until`; both NULL when nobody does.
    lease_owner text,
    lease_until timestamptz,
    -- The last finished crawl: when, and by which worker.
    last_crawled_at timestamptz,
    last_crawled_by text,
    -- How many crawls of this domain finished.
    crawls bigint NOT NULL DEFAULT 0 CHECK (crawls >= 0),
    CHECK ((lease_owner IS NULL) = (lease_until IS NULL))
);
CREATE INDEX frontier_due ON frontier (next_crawl_at);

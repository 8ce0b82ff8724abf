-- The frontier of a directory (the `store` crate's PostgreSQL backend), version 3.
--
-- Every store now has a frontier, and it remembers more than the crawl workers' leases: how
-- each domain got there (`added_as`, with `source` and `rank` when they say more), its
-- adaptive revisit interval, how its last crawl ended, and whether an operator delisted it.
-- A delisted row is a deny list entry: no seed list, submission or discovery re-adds it, no
-- crawl leases it, and no crawl stores anything for it.
ALTER TABLE frontier
    ADD COLUMN added_as text NOT NULL DEFAULT 'seed'
        CHECK (added_as IN ('seed', 'submitted', 'discovered', 'imported')),
    ADD COLUMN source text,
    ADD COLUMN rank bigint CHECK (rank >= 0),
    ADD COLUMN added_at timestamptz NOT NULL DEFAULT now(),
    -- The revisit interval, in seconds; NULL before the first crawl.
    ADD COLUMN interval_secs bigint CHECK (interval_secs >= 0),
    -- How the last crawl ended: the crawl report's `outcome`.
    ADD COLUMN last_outcome text,
    ADD COLUMN last_changed_at timestamptz,
    ADD COLUMN delisted_reason text,
    ADD COLUMN delisted_at timestamptz,
    ADD CONSTRAINT frontier_delisting CHECK ((delisted_reason IS NULL) = (delisted_at IS NULL));

-- Leasing reads due rows in due order: only rows that are not delisted are leased.
DROP INDEX frontier_due;
CREATE INDEX frontier_due ON frontier (next_crawl_at, domain) WHERE delisted_at IS NULL;
-- A row whose last crawl lies in the future (the server's clock was set back) is due at once;
-- this index finds such rows without a scan.
CREATE INDEX frontier_last ON frontier (last_crawled_at);

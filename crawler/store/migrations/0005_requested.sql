-- Requests that a crawl in flight does not answer (the `store` crate's PostgreSQL backend),
-- version 5.
--
-- `requested_at` is when someone last asked for a crawl of the domain now (an IndexNow ping,
-- a recrawl request, a submission, an operator's crawl_now); `leased_at` is when the lease
-- its crawl holds was taken. A request later than the lease may have come after the crawl
-- read the site, so finishing that crawl leaves the domain due; a crawl leased after the
-- request answers it, and finishing it clears `requested_at`.
ALTER TABLE frontier
    ADD COLUMN requested_at timestamptz,
    ADD COLUMN leased_at timestamptz;

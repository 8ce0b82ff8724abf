//! The access policy: which records a caller may see (docs/api.md, "Access").
//!
//! [`Policy::allows`] is the one place the rule is decided. Every endpoint, page and protocol
//! view asks it for each record it lists or shows, and for each crawl error or diagnostic
//! that concerns a record (through the read model, `directory`, the only code that asks it):
//! search hits, records, descriptors, files, changes, the domains' errors and diagnostics,
//! the skill-sharing index and registry, the JSON-RPC methods and the web pages.
//!
//! The index applies the same rule inside its queries (a caller's [`Caller`] selects it), so
//! that totals and facet counts, which are not records, leave out what a caller may not see;
//! a test below pins that the index and the policy agree, and the tests of the endpoints
//! (`tests::every_endpoint_asks_the_policy`) swap in a policy that refuses everything to show
//! that nothing reaches a caller without being asked about.

use formats::Access;
use indexer::Caller;

/// Who may see what.
#[derive(Debug, Default)]
pub(crate) struct Policy {
    /// Test-only: refuse every record, whoever asks.
    #[cfg(test)]
    refuse_all: bool,
}

impl Policy {
    /// Returns true when `caller` may see a record whose access level is `access`: an
    /// authenticated caller sees every record, an anonymous one every record that is not
    /// `private`. A record that cannot be found is asked about as `private` (fail closed).
    pub(crate) fn allows(&self, caller: Caller, access: Access) -> bool {
        #[cfg(test)]
        if self.refuse_all {
            return false;
        }
        match caller {
            Caller::Authenticated => true,
            Caller::Anonymous => access != Access::Private,
        }
    }

    /// Returns a policy that refuses every record.
    #[cfg(test)]
    pub(crate) fn refuse_all() -> Policy {
        Policy { refuse_all: true }
    }
}

#[cfg(test)]
mod tests;

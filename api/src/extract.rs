//! Extractors whose rejections are [`ApiError`]s, so that every bad request gets the one
//! error shape: [`ApiPath`], [`ApiBytes`], and [`Params`], the query string with repeated
//! parameters (`?type=api&type=task`), which serde's form decoding does not support.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use formats::audit::Risk;
use formats::{Access, Format, Verdict};
use indexer::{Caller, DEFAULT_LIMIT, Filters, MAX_LIMIT, MAX_OFFSET, SearchRequest};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::error::{ApiError, shorten};

/// The longest query string read, in bytes; a longer one is refused before it is parsed.
pub(crate) const MAX_QUERY_STRING_BYTES: usize = 16 * 1024;
/// The longest search text, in characters.
/// The most values one filter parameter may hold (after splitting at commas).
pub(crate) const MAX_FILTER_VALUES: usize = 50;
/// The longest filter value, in characters.
pub(crate) const MAX_FILTER_VALUE_CHARS: usize = 256;

/// A filter whose values are a closed set: `values` lists them (their wire names).
pub(crate) struct ClosedFilter {
    /// The parameter.
    pub(crate) name: &'static str,
    /// Its allowed values.
    pub(crate) values: fn() -> Vec<&'static str>,
}

/// The filters with a closed set of values. Each value given is checked against its set (case
/// aside, as the index compares them), and an unknown one is a 400 that names the allowed
/// values, for every front end that takes filters (`/v1/search`, the search page, MCP's
/// `search_skills`, `/v1/export`, `skillscout search` and `export`).
pub(crate) const CLOSED_FILTERS: [ClosedFilter; 4] = [
    ClosedFilter {
        name: "verdict",
        values: || {
            let mut values: Vec<&str> = Verdict::ALL.iter().map(|v| v.as_str()).collect();
            values.push(indexer::ANY_VERDICT);
            values
        },
    },
    ClosedFilter {
        name: "access",
        values: || Access::ALL.iter().map(|access| access.as_str()).collect(),
    },
    ClosedFilter {
        name: "format",
        values: || Format::ALL.iter().map(|format| format.as_str()).collect(),
    },
    ClosedFilter {
        name: "risk",
        values: || {
            let mut values: Vec<&str> = RISKS.iter().map(|risk| risk.as_str()).collect();
            values.push(indexer::ANY_RISK);
            values
        },
    },
];

/// Every risk, lowest first: the values of the `risk` filter besides `any`.
pub(crate) const RISKS: [Risk; 5] = [
    Risk::None,
    Risk::Low,
    Risk::Medium,
    Risk::High,
    Risk::Critical,
];

/// `Path<T>` whose rejection is an [`ApiError`] (a 400 `invalid_path`).
#[derive(Debug, FromRequestParts)]
#[from_request(via(Path), rejection(ApiError))]
pub(crate) struct ApiPath<T>(pub(crate) T);

/// The raw request body, capped by the router's body limit; a body over it is a 413.
#[derive(Debug)]
pub(crate) struct ApiBytes(pub(crate) Bytes);

impl<S: Send + Sync> FromRequest<S> for ApiBytes {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<ApiBytes, ApiError> {
        Ok(ApiBytes(Bytes::from_request(request, state).await?))
    }
}

/// The query string, decoded into name/value pairs in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Params {
    pairs: Vec<(String, String)>,
}

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Params, ApiError> {
        Params::parse(parts.uri.query().unwrap_or(""))
    }
}

impl Params {
    /// Decodes a query string (`a=1&b=2`); bytes that are not UTF-8 become U+FFFD.
    pub(crate) fn parse(raw: &str) -> Result<Params, ApiError> {
        if raw.len() > MAX_QUERY_STRING_BYTES {
            return Err(ApiError::parameter(
                "query string",
                format!("the query string is longer than {MAX_QUERY_STRING_BYTES} bytes"),
            ));
        }
        let pairs = url::form_urlencoded::parse(raw.as_bytes())
            .map(|(name, value)| (name.into_owned(), value.into_owned()))
            .collect();
        Ok(Params { pairs })
    }

    /// Returns the parameters `pairs` (name, value), as if decoded from a query string.
    pub(crate) fn from_pairs(pairs: Vec<(String, String)>) -> Params {
        Params { pairs }
    }

    /// Returns the value of a parameter that may be given once; twice is an error.
    pub(crate) fn one(&self, name: &str) -> Result<Option<&str>, ApiError> {
        let mut values = self
            .pairs
            .iter()
            .filter(|(key, _)| key == name)
            .map(|(_, value)| value.as_str());
        let first = values.next();
        if values.next().is_some() {
            return Err(ApiError::parameter(
                name,
                format!("parameter {name:?} is given more than once"),
            ));
        }
        Ok(first)
    }

    /// Returns every value of a repeatable parameter, each split at commas, checked against
    /// the filter limits.
    pub(crate) fn all(&self, name: &str) -> Result<Vec<String>, ApiError> {
        let mut values = Vec::new();
        for (_, value) in self.pairs.iter().filter(|(key, _)| key == name) {
            for part in value
                .split(',')
                .map(str::trim)
                .filter(|part| !part.is_empty())
            {
                if part.chars().count() > MAX_FILTER_VALUE_CHARS {
                    return Err(ApiError::parameter(
                        name,
                        format!(
                            "a value of {name:?} is longer than {MAX_FILTER_VALUE_CHARS} characters"
                        ),
                    ));
                }
                values.push(part.to_owned());
            }
        }
        if values.len() > MAX_FILTER_VALUES {
            return Err(ApiError::parameter(
                name,
                format!("parameter {name:?} has more than {MAX_FILTER_VALUES} values"),
            ));
        }
        Ok(values)
    }

    /// Returns an integer parameter within `min..=max`, or `default` when it is absent.
    pub(crate) fn integer(
        &self,
        name: &str,
        min: usize,
        max: usize,
        default: usize,
    ) -> Result<usize, ApiError> {
        let Some(raw) = self.one(name)? else {
            return Ok(default);
        };
        match raw.trim().parse::<usize>() {
            Ok(value) if (min..=max).contains(&value) => Ok(value),
            _ => Err(ApiError::parameter(
                name,
                format!("parameter {name:?} must be an integer from {min} to {max}, not {raw:?}"),
            )),
        }
    }

    /// Returns `limit` (1 to 100, `default` when absent).
    pub(crate) fn limit(&self, default: usize) -> Result<usize, ApiError> {
        self.integer("limit", 1, MAX_LIMIT, default)
    }

    /// Returns `since`, an RFC 3339 time, when given.
    pub(crate) fn since(&self) -> Result<Option<OffsetDateTime>, ApiError> {
        let Some(raw) = self.one("since")? else {
            return Ok(None);
        };
        OffsetDateTime::parse(raw.trim(), &Rfc3339)
            .map(Some)
            .map_err(|_| {
                ApiError::parameter(
                    "since",
                    format!(
                        "since must be an RFC 3339 time such as 2026-01-31T12:00:00Z, not {raw:?}"
                    ),
                )
            })
    }

    /// Returns the search text `q` (empty when absent). Its length is checked by the index
    /// ([`indexer::MAX_QUERY_CHARS`]), the one place that limit lives.
    pub(crate) fn query(&self) -> Result<String, ApiError> {
        Ok(self.one("q")?.unwrap_or("").trim().to_owned())
    }

    /// Returns the exact filters: `type`, `access`, `domain`, `format`, `tag`, `license`,
    /// `verdict` (none: `valid` and `lenient`; `any`: every verdict), `risk` (none: every
    /// risk but `critical`; `any`: every risk). The values of the filters with a closed set
    /// ([`CLOSED_FILTERS`]) are checked.
    pub(crate) fn filters(&self) -> Result<Filters, ApiError> {
        Ok(Filters {
            capability_type: self.all("type")?,
            access: self.closed("access")?,
            domain: self.all("domain")?,
            format: self.closed("format")?,
            tag: self.all("tag")?,
            license: self.all("license")?,
            verdict: self.closed("verdict")?,
            risk: self.closed("risk")?,
        })
    }

    /// Returns every value of the closed filter `name`, each checked against its set.
    fn closed(&self, name: &str) -> Result<Vec<String>, ApiError> {
        let values = self.all(name)?;
        let Some(filter) = CLOSED_FILTERS.iter().find(|filter| filter.name == name) else {
            return Ok(values);
        };
        let allowed = (filter.values)();
        for value in &values {
            if !allowed
                .iter()
                .any(|known| known.eq_ignore_ascii_case(value))
            {
                return Err(ApiError::parameter(
                    name,
                    format!(
                        "unknown {name} {:?}; {name} is one of {}",
                        shorten(value, 100),
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(values)
    }

    /// Returns the `/v1/search` request these parameters describe, run as `caller`.
    pub(crate) fn search_request(&self, caller: Caller) -> Result<SearchRequest, ApiError> {
        Ok(SearchRequest {
            query: self.query()?,
            filters: self.filters()?,
            limit: self.limit(DEFAULT_LIMIT)?,
            offset: self.integer("offset", 0, MAX_OFFSET, 0)?,
            caller,
            fold: true,
        })
    }

    /// Returns the name/value pairs, in order (for building links that keep them).
    pub(crate) fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }
}

/// The caller's address: the client behind the trusted proxies (`--trusted-proxy`, read from
/// `X-Forwarded-For` by the rate limit's middleware), else the peer of the connection (every
/// request of a server started with `api::serve` has one). Requests without one share one
/// budget.
pub(crate) fn client_address(extensions: &axum::http::Extensions) -> std::net::IpAddr {
    if let Some(crate::ratelimit::ClientAddress(address)) = extensions.get() {
        return *address;
    }
    extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|axum::extract::ConnectInfo(peer)| peer.ip())
        .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_and_comma_separated_values_are_all_kept() {
        let params = Params::parse("type=api,task&type=plugin&q=pdf+tools&limit=5").unwrap();
        assert_eq!(params.all("type").unwrap(), ["api", "task", "plugin"]);
        assert_eq!(params.query().unwrap(), "pdf tools");
        assert_eq!(params.limit(20).unwrap(), 5);
    }

    #[test]
    fn out_of_range_and_repeated_scalars_are_refused() {
        for raw in [
            "limit=0",
            "limit=101",
            "limit=100000",
            "limit=-1",
            "limit=ten",
            "limit=1&limit=2",
            "offset=-1",
            "offset=10001",
        ] {
            let params = Params::parse(raw).unwrap();
            let limit = params.limit(20);
            let offset = params.integer("offset", 0, MAX_OFFSET, 0);
            assert!(limit.is_err() || offset.is_err(), "{raw}");
        }
    }

    #[test]
    fn closed_filters_refuse_unknown_values_and_name_the_allowed_ones() {
        let params = Params::parse("verdict=Valid,any&access=PUBLIC&format=mcp-skills").unwrap();
        let filters = params.filters().unwrap();
        assert_eq!(filters.verdict, ["Valid", "any"]);
        for (raw, name) in [
            ("verdict=vaild", "verdict"),
            ("access=everyone", "access"),
            ("format=agent_skills", "format"),
            ("risk=severe", "risk"),
        ] {
            let error = Params::parse(raw).unwrap().filters().unwrap_err();
            let ApiError::InvalidParameter {
                name: which,
                message,
            } = &error
            else {
                panic!("{error:?}");
            };
            assert_eq!(which, name);
            assert!(message.contains(" is one of "), "{message}");
        }
        let error = Params::parse("verdict=vaild")
            .unwrap()
            .filters()
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown verdict \"vaild\"; verdict is one of valid, lenient, invalid, any"
        );
        let risk = Params::parse("risk=Critical&risk=any")
            .unwrap()
            .filters()
            .unwrap();
        assert_eq!(risk.risk, ["Critical", "any"]);
        let error = Params::parse("risk=severe").unwrap().filters().unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown risk \"severe\"; risk is one of none, low, medium, high, critical, any"
        );
    }

    #[test]
    fn huge_query_strings_are_refused() {
        let huge = "a".repeat(MAX_QUERY_STRING_BYTES + 1);
        assert!(Params::parse(&huge).is_err());
    }
}

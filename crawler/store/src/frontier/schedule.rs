//! When a domain is crawled again: an adaptive revisit interval, after Nutch's
//! `AdaptiveFetchSchedule`. Pure arithmetic, so both backends compute the same schedule and
//! property tests can hold it to its promises.
//!
//! A domain whose skills changed in a crawl is visited sooner (the interval shrinks by
//! [`SHRINK`]), one that published the same thing later (it grows by [`GROW`]), both between
//! the minimum and the maximum interval. A domain that publishes nothing or cannot be reached
//! backs off, doubling its interval up to [`BACKOFF_CAP`]. A host's own request for a longer
//! wait (a `Retry-After` over what a crawl waits out) is honoured on top.

use std::time::Duration;

use crate::types::Outcome;

/// The default shortest interval between two crawls of a domain (`--min-interval`).
pub const DEFAULT_MIN_INTERVAL: Duration = Duration::from_secs(60 * 60);
/// The default longest interval for a domain that publishes (`--max-interval`).
pub const DEFAULT_MAX_INTERVAL: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// The interval of a domain's first crawl, when no other is set.
pub const DEFAULT_INITIAL_INTERVAL: Duration = Duration::from_secs(24 * 60 * 60);
/// The longest interval of a domain that publishes nothing or cannot be reached.
pub const BACKOFF_CAP: Duration = Duration::from_secs(30 * 24 * 60 * 60);
/// How much a domain's interval shrinks when its skills changed (Nutch's `DEC_RATE`).
pub const SHRINK: f64 = 0.2;
/// How much a domain's interval grows when its skills did not change (Nutch's `INC_RATE`).
pub const GROW: f64 = 0.4;

/// What a crawl of a domain saw, as the schedule reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observation {
    /// An index was read and something it publishes was added, changed or removed.
    Changed,
    /// An index was read and everything it publishes was as before, or the host answered but
    /// something went wrong (an unusable index, errors): reachable, nothing new learnt.
    Unchanged,
    /// Nothing is published (every well-known path 404/410), robots.txt keeps us out, or the
    /// host cannot be reached: back off.
    Nothing,
}

impl Observation {
    /// Reads a crawl's outcome and whether it changed any record.
    pub fn of(outcome: Outcome, changed: bool) -> Observation {
        match outcome {
            Outcome::Ok if changed => Observation::Changed,
            Outcome::Ok | Outcome::Error => Observation::Unchanged,
            Outcome::NotFound | Outcome::Disallowed | Outcome::Unreachable => Observation::Nothing,
        }
    }
}

/// The revisit policy: the bounds an interval moves between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// The shortest interval (`--min-interval`).
    pub min_interval: Duration,
    /// The longest interval of a domain that publishes (`--max-interval`).
    pub max_interval: Duration,
    /// The interval a domain starts from on its first crawl.
    pub initial_interval: Duration,
}

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule {
            min_interval: DEFAULT_MIN_INTERVAL,
            max_interval: DEFAULT_MAX_INTERVAL,
            initial_interval: DEFAULT_INITIAL_INTERVAL,
        }
    }
}

impl Schedule {
    /// Checks the bounds: a minimum of at least a second, not above the maximum, which is at
    /// most the back-off cap.
    pub fn check(&self) -> Result<(), String> {
        if self.min_interval < Duration::from_secs(1) {
            return Err("the minimum interval must be at least 1s".to_owned());
        }
        if self.min_interval > self.max_interval {
            return Err(format!(
                "the minimum interval ({}) is longer than the maximum ({})",
                human(self.min_interval),
                human(self.max_interval)
            ));
        }
        if self.max_interval > BACKOFF_CAP {
            return Err(format!(
                "the maximum interval must be at most {}",
                human(BACKOFF_CAP)
            ));
        }
        Ok(())
    }

    /// Returns the interval after a crawl that saw `observed`, given the interval before it
    /// (`None` on a domain's first crawl, which starts from the initial interval).
    pub fn next_interval(&self, previous: Option<Duration>, observed: Observation) -> Duration {
        let upper = self.max_interval.max(self.min_interval);
        let start = self.initial_interval.clamp(self.min_interval, upper);
        match (previous, observed) {
            (None, Observation::Changed | Observation::Unchanged) => start,
            (None, Observation::Nothing) => {
                scale(start, 2.0).clamp(self.min_interval, BACKOFF_CAP.max(upper))
            }
            (Some(previous), Observation::Changed) => {
                scale(previous, 1.0 - SHRINK).clamp(self.min_interval, upper)
            }
            (Some(previous), Observation::Unchanged) => {
                // A domain back from a long back-off starts again from the top of the range.
                scale(previous, 1.0 + GROW).clamp(self.min_interval, upper)
            }
            (Some(previous), Observation::Nothing) => {
                scale(previous.max(start), 2.0).clamp(self.min_interval, BACKOFF_CAP.max(upper))
            }
        }
    }

    /// Returns how long after a crawl the domain is due again: its new interval, or the wait
    /// its host asked for when that is longer.
    pub fn wait(interval: Duration, not_before: Option<Duration>) -> Duration {
        not_before.map_or(interval, |wait| wait.max(interval))
    }
}

/// Multiplies a duration by `factor`, in whole seconds, saturating.
fn scale(duration: Duration, factor: f64) -> Duration {
    let seconds = (duration.as_secs_f64() * factor).round();
    if seconds.is_finite() && seconds > 0.0 {
        Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX)
    } else {
        Duration::ZERO
    }
}

/// Writes a duration the way the flags take it: `7d`, `1h30m`, `45s`.
pub fn human(duration: Duration) -> String {
    let mut seconds = duration.as_secs();
    if seconds == 0 {
        return "0s".to_owned();
    }
    let mut out = String::new();
    for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] {
        if seconds >= size {
            out.push_str(&format!("{}{unit}", seconds / size));
            seconds %= size;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const HOUR: Duration = Duration::from_secs(3600);
    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn the_defaults_move_as_documented() {
        let schedule = Schedule::default();
        assert_eq!(schedule.next_interval(None, Observation::Changed), DAY);
        assert_eq!(schedule.next_interval(None, Observation::Nothing), 2 * DAY);
        let shrunk = schedule.next_interval(Some(DAY), Observation::Changed);
        assert_eq!(shrunk, Duration::from_secs(69_120));
        let grown = schedule.next_interval(Some(DAY), Observation::Unchanged);
        assert_eq!(grown, Duration::from_secs(120_960));
        // Unchanged for long, a domain settles at the maximum; changing often, at the minimum.
        let mut interval = DAY;
        for _ in 0..50 {
            interval = schedule.next_interval(Some(interval), Observation::Unchanged);
        }
        assert_eq!(interval, DEFAULT_MAX_INTERVAL);
        for _ in 0..50 {
            interval = schedule.next_interval(Some(interval), Observation::Changed);
        }
        assert_eq!(interval, HOUR);
        // Publishing nothing, it backs off to 30 days and stays there.
        for _ in 0..50 {
            interval = schedule.next_interval(Some(interval), Observation::Nothing);
        }
        assert_eq!(interval, BACKOFF_CAP);
        // Publishing again, it comes back within the range at once.
        let back = schedule.next_interval(Some(interval), Observation::Changed);
        assert_eq!(back, DEFAULT_MAX_INTERVAL);
    }

    #[test]
    fn bad_bounds_are_refused() {
        let bad = Schedule {
            min_interval: DAY,
            max_interval: HOUR,
            ..Schedule::default()
        };
        assert!(bad.check().unwrap_err().contains("longer than the maximum"));
        let too_long = Schedule {
            max_interval: BACKOFF_CAP * 2,
            ..Schedule::default()
        };
        assert!(too_long.check().is_err());
        let zero = Schedule {
            min_interval: Duration::ZERO,
            ..Schedule::default()
        };
        assert!(zero.check().is_err());
        assert!(Schedule::default().check().is_ok());
    }

    #[test]
    fn a_host_that_asks_to_wait_longer_is_left_longer() {
        assert_eq!(Schedule::wait(HOUR, None), HOUR);
        assert_eq!(Schedule::wait(HOUR, Some(DAY)), DAY);
        assert_eq!(Schedule::wait(DAY, Some(HOUR)), DAY);
    }

    #[test]
    fn durations_are_written_as_the_flags_take_them() {
        assert_eq!(human(Duration::from_secs(5400)), "1h30m");
        assert_eq!(human(DEFAULT_MAX_INTERVAL), "7d");
        assert_eq!(human(Duration::from_secs(45)), "45s");
        assert_eq!(human(Duration::ZERO), "0s");
    }

    fn schedules() -> impl Strategy<Value = Schedule> {
        (1u64..=30 * 86_400, 1u64..=30 * 86_400, 1u64..=60 * 86_400).prop_map(|(a, b, initial)| {
            Schedule {
                min_interval: Duration::from_secs(a.min(b)),
                max_interval: Duration::from_secs(a.max(b)),
                initial_interval: Duration::from_secs(initial),
            }
        })
    }

    fn observations() -> impl Strategy<Value = Observation> {
        prop_oneof![
            Just(Observation::Changed),
            Just(Observation::Unchanged),
            Just(Observation::Nothing),
        ]
    }

    proptest! {
        /// Whatever happened before, an interval stays within its bounds: the range for a
        /// domain that publishes, the back-off cap for one that does not.
        #[test]
        fn intervals_stay_within_bounds(
            schedule in schedules(),
            previous in proptest::option::of(0u64..=400 * 86_400),
            history in proptest::collection::vec(observations(), 1..40),
        ) {
            prop_assert!(schedule.check().is_ok());
            let mut interval = previous.map(Duration::from_secs);
            for observed in history {
                let next = schedule.next_interval(interval, observed);
                prop_assert!(next >= schedule.min_interval);
                match observed {
                    Observation::Nothing => prop_assert!(next <= BACKOFF_CAP),
                    _ => prop_assert!(next <= schedule.max_interval),
                }
                interval = Some(next);
            }
        }

        /// A change never makes the next visit later, no change never makes it sooner, and
        /// publishing nothing never makes it sooner than an unchanged site would be.
        #[test]
        fn change_means_sooner_and_silence_means_later(
            schedule in schedules(),
            previous in 0u64..=30 * 86_400,
        ) {
            let previous = Duration::from_secs(previous)
                .clamp(schedule.min_interval, schedule.max_interval);
            let changed = schedule.next_interval(Some(previous), Observation::Changed);
            let unchanged = schedule.next_interval(Some(previous), Observation::Unchanged);
            let nothing = schedule.next_interval(Some(previous), Observation::Nothing);
            prop_assert!(changed <= previous);
            prop_assert!(unchanged >= previous);
            prop_assert!(changed <= unchanged);
            prop_assert!(nothing >= unchanged.min(BACKOFF_CAP));
        }

        /// The wait before the next crawl is never shorter than the interval or than what
        /// the host asked for.
        #[test]
        fn a_requested_wait_is_honoured(interval in 0u64..10_000_000, asked in proptest::option::of(0u64..10_000_000)) {
            let interval = Duration::from_secs(interval);
            let asked = asked.map(Duration::from_secs);
            let wait = Schedule::wait(interval, asked);
            prop_assert!(wait >= interval);
            if let Some(asked) = asked {
                prop_assert!(wait >= asked);
            }
        }
    }
}

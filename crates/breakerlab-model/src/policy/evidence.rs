//! What a breaker's decision rules saw at one instant: the evidence behind a state change
//! (explain.csv, `breakerlab explain`). A small fixed-size `Copy` record of named checks
//! (`window_calls >= min_calls`) and facts, each named after the quantity measured and the
//! family's own parameter, so a family fills it at the moment of a change without allocating.
//! A leaf: it imports nothing else of `policy`.

use crate::time::Dur;

/// Most items one record holds (the generic family with every trip rule on needs 8).
pub const CAPACITY: usize = 10;

/// How an item's value and limit are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A whole number of calls, failures, probes.
    Count,
    /// A ratio or rate (failure rate, success rate).
    Ratio,
    /// A duration (microseconds inside, written as `30s`).
    Time,
}

/// How a measured value is compared with its limit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Test {
    /// Trips (or decides) at the limit.
    AtLeast,
    /// Only above the limit.
    Above,
    /// At the limit or under it (a success rate that falls to it).
    AtMost,
    /// Only under the limit.
    Below,
    /// Shown against its limit without deciding anything (probes admitted of those permitted).
    Of,
    /// A plain value, no limit (the current open duration, a bucket's count).
    Fact,
}

impl Test {
    /// The comparison as written in explain.csv's `evidence` column.
    pub fn symbol(self) -> &'static str {
        match self {
            Test::AtLeast => ">=",
            Test::Above => ">",
            Test::AtMost => "<=",
            Test::Below => "<",
            Test::Of => "/",
            Test::Fact => "",
        }
    }

    /// Parses [`Test::symbol`] (longest first).
    pub fn from_symbol(s: &str) -> Option<Test> {
        [Test::AtLeast, Test::AtMost, Test::Above, Test::Below, Test::Of]
            .into_iter()
            .find(|t| t.symbol() == s)
    }

    /// True when `value` passes the test against `limit` (`Of` and facts never decide).
    pub fn holds(self, value: f64, limit: f64) -> bool {
        match self {
            Test::AtLeast => value >= limit,
            Test::Above => value > limit,
            Test::AtMost => value <= limit,
            Test::Below => value < limit,
            Test::Of | Test::Fact => false,
        }
    }

    /// True for the tests that decide something.
    pub fn decides(self) -> bool {
        !matches!(self, Test::Of | Test::Fact)
    }
}

/// One named quantity, with the parameter it is compared against.
#[derive(Copy, Clone, Debug)]
pub struct Item {
    /// What was measured, e.g. `window_calls` (a column of explain.csv).
    pub name: &'static str,
    /// Its unit (the limit's too).
    pub unit: Unit,
    /// The measured value (microseconds for a time).
    pub value: f64,
    /// How it is compared.
    pub test: Test,
    /// The family's parameter it is compared with, e.g. `min_calls` (empty for a fact).
    pub param: &'static str,
    /// The parameter's value in effect (microseconds for a time).
    pub limit: f64,
}

impl Item {
    const EMPTY: Item =
        Item { name: "", unit: Unit::Count, value: 0.0, test: Test::Fact, param: "", limit: 0.0 };

    /// True when the check passes.
    pub fn holds(&self) -> bool {
        self.test.holds(self.value, self.limit)
    }

    /// How far a deciding check is towards passing, in [0, 1] (1 when it holds).
    fn progress(&self) -> f64 {
        if self.holds() {
            return 1.0;
        }
        let p = match self.test {
            Test::AtLeast | Test::Above if self.limit > 0.0 => self.value / self.limit,
            Test::AtMost | Test::Below if self.value > 0.0 => self.limit / self.value,
            _ => 0.0,
        };
        p.clamp(0.0, 1.0)
    }
}

/// The evidence of one instant: up to [`CAPACITY`] items, in the family's order.
#[derive(Copy, Clone, Debug)]
pub struct Evidence {
    len: u8,
    items: [Item; CAPACITY],
}

impl Default for Evidence {
    fn default() -> Evidence {
        Evidence::EMPTY
    }
}

impl PartialEq for Evidence {
    fn eq(&self, other: &Evidence) -> bool {
        let same = |a: &Item, b: &Item| {
            (a.name, a.unit, a.test, a.param) == (b.name, b.unit, b.test, b.param)
                && a.value.to_bits() == b.value.to_bits()
                && a.limit.to_bits() == b.limit.to_bits()
        };
        self.len == other.len && self.items().iter().zip(other.items()).all(|(a, b)| same(a, b))
    }
}

// Values are never NaN (rates over no calls are 0), and equality compares bits.
impl Eq for Evidence {}

impl Evidence {
    /// No items.
    pub const EMPTY: Evidence = Evidence { len: 0, items: [Item::EMPTY; CAPACITY] };

    /// The items, in the order they were added.
    pub fn items(&self) -> &[Item] {
        &self.items[..usize::from(self.len)]
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds one item; a record already full keeps its first [`CAPACITY`] (a family's test
    /// checks its largest record fits).
    pub fn push(&mut self, item: Item) {
        debug_assert!(usize::from(self.len) < CAPACITY, "evidence full: {item:?}");
        if let Some(slot) = self.items.get_mut(usize::from(self.len)) {
            *slot = item;
            self.len += 1;
        }
    }

    /// A count compared with a count parameter: `window_calls >= min_calls`.
    pub fn count(&mut self, name: &'static str, value: u64, test: Test, param: &'static str, limit: u64) {
        self.push(Item { name, unit: Unit::Count, value: value as f64, test, param, limit: limit as f64 });
    }

    /// A rate `num / den` (0 over no calls) compared with a ratio parameter.
    pub fn rate(
        &mut self,
        name: &'static str,
        num: u64,
        den: u64,
        test: Test,
        param: &'static str,
        limit: f64,
    ) {
        let value = if den == 0 { 0.0 } else { num as f64 / den as f64 };
        self.ratio(name, value, test, param, limit);
    }

    /// A ratio compared with a ratio parameter.
    pub fn ratio(&mut self, name: &'static str, value: f64, test: Test, param: &'static str, limit: f64) {
        self.push(Item { name, unit: Unit::Ratio, value, test, param, limit });
    }

    /// A duration compared with a duration parameter: `open_for >= cooldown`.
    pub fn time(&mut self, name: &'static str, value: Dur, test: Test, param: &'static str, limit: Dur) {
        let (value, limit) = (value.micros() as f64, limit.micros() as f64);
        self.push(Item { name, unit: Unit::Time, value, test, param, limit });
    }

    /// How long the breaker has been open, compared with the parameter that ends it:
    /// `time_open >= cooldown`.
    pub fn open_for(&mut self, open: Dur, test: Test, param: &'static str, limit: Dur) {
        self.time("time_open", open, test, param, limit);
    }

    /// A count with no limit.
    pub fn fact_count(&mut self, name: &'static str, value: u64) {
        self.push(Item { name, unit: Unit::Count, value: value as f64, ..Item::EMPTY });
    }

    /// A duration with no limit (a parameter's value in effect, e.g. the grown open duration).
    pub fn fact_time(&mut self, name: &'static str, value: Dur) {
        self.push(Item { name, unit: Unit::Time, value: value.micros() as f64, ..Item::EMPTY });
    }

    /// A ratio with no limit.
    pub fn fact_ratio(&mut self, name: &'static str, value: f64) {
        self.push(Item { name, unit: Unit::Ratio, value, ..Item::EMPTY });
    }

    /// How close these checks are to all passing: the number that pass, then the mean progress
    /// of the others. Orders the moments of an incident (its peak is the closest).
    pub fn closeness(&self) -> (usize, f64) {
        let checks = self.items().iter().filter(|i| i.test.decides());
        let (mut held, mut progress, mut n) = (0, 0.0, 0usize);
        for c in checks {
            n += 1;
            if c.holds() {
                held += 1;
            }
            progress += c.progress();
        }
        (held, if n == 0 { 0.0 } else { progress / n as f64 })
    }

    /// Item-wise the values nearest to passing of `self` and `other`, when both have the same
    /// layout (same names in the same order); `false` (and `self` unchanged) otherwise.
    pub fn keep_best(&mut self, other: &Evidence) -> bool {
        if self.len != other.len || self.items().iter().zip(other.items()).any(|(a, b)| a.name != b.name) {
            return false;
        }
        for (mine, theirs) in self.items[..usize::from(self.len)].iter_mut().zip(other.items()) {
            let better = match mine.test {
                Test::AtLeast | Test::Above | Test::Of | Test::Fact => theirs.value > mine.value,
                Test::AtMost | Test::Below => theirs.value < mine.value,
            };
            if better {
                mine.value = theirs.value;
                mine.limit = theirs.limit;
            }
        }
        true
    }
}

/// How a measured quantity reads in words, `{}` standing for its value (`{} calls in the
/// window` → `7 calls in the window`), for `breakerlab explain` and the report's tooltips;
/// `None` for a parameter shown as a plain value (`latency_threshold 8s`). Every name a family
/// measures has one (a registry test checks).
pub fn phrase(name: &str) -> Option<&'static str> {
    const PHRASES: &[(&str, &str)] = &[
        ("consecutive_failures", "{} consecutive failures"),
        ("consecutive_failure_count", "{} consecutive failures"),
        ("consecutive_successes", "{} consecutive successes"),
        ("consecutive_5xx_seen", "{} consecutive 5xx answers"),
        ("consecutive_gateway_failures_seen", "{} consecutive gateway errors (502, 503, 504)"),
        ("consecutive_local_origin_failures_seen", "{} consecutive local-origin failures"),
        ("host_success_rate", "a success rate of {} over the last interval"),
        ("host_failure_rate", "a failure rate of {} over the last interval"),
        ("ejected_hosts", "{} hosts ejected"),
        ("recent_failures", "{} failures within failure_window"),
        ("failures_in_window", "{} failures in the window"),
        ("failure_count", "{} failures counted"),
        ("fail_counter", "{} failures counted"),
        ("count_window_calls", "{} calls in the count window"),
        ("count_window_failure_rate", "a failure rate of {} over the count window"),
        ("window_calls", "{} calls in the window"),
        ("window_requests", "{} requests in the window"),
        ("window_failure_rate", "a failure rate of {} in the window"),
        ("window_failure_ratio", "a failure ratio of {} in the sampling window"),
        ("window_error_rate", "an error rate of {} in the window"),
        ("window_slow_rate", "a slow-call rate of {} in the window"),
        ("failure_rate_percent", "{}% failures in the window"),
        ("slow_call_rate_percent", "{}% slow calls in the window"),
        ("calls_over_latency", "{} calls in the window at or over the latency limit"),
        ("executions", "{} executions in the window"),
        ("throughput", "{} calls in the sampling window"),
        ("request_volume", "{} requests in the health snapshot"),
        ("error_percentage", "{}% errors"),
        ("fires", "{} fires in the rolling window"),
        ("success_rate_ema", "a success rate of {} (moving average)"),
        ("requests", "{} requests"),
        ("accepts", "{} accepted by the backend"),
        ("rejection_probability", "a rejection probability of {}"),
        ("ejection_multiplier", "an ejection multiplier of {}"),
        ("time_open", "open for {}"),
        ("time_ejected", "ejected for {}"),
        ("time_dead", "marked dead for {}"),
        ("time_half_open", "half-open for {}"),
        ("time_since_revival", "{} since the last revival"),
        ("time_since_start", "{} since the start"),
        ("probes_admitted", "{} calls admitted in half-open"),
        ("half_open_calls", "{} half-open calls counted"),
        ("probe_successes", "{} probe successes"),
        ("probe_failures", "{} probe failures"),
        ("probe_results", "{} probe results"),
        ("probes_failure_rate", "a failure rate of {} among the probes"),
        ("probe_failure_rate_percent", "{}% failures among the probes"),
    ];
    PHRASES.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_hold_by_their_test_and_closeness_orders_moments() {
        let mut far = Evidence::EMPTY;
        far.count("window_calls", 7, Test::AtLeast, "min_calls", 20);
        far.rate("window_failure_rate", 7, 7, Test::AtLeast, "failure_rate", 0.5);
        let mut near = far;
        near.items[0].value = 19.0;
        assert_eq!(far.items().iter().map(Item::holds).collect::<Vec<_>>(), [false, true]);
        assert!(near.closeness() > far.closeness());
        let mut best = far;
        assert!(best.keep_best(&near));
        assert_eq!(best.items()[0].value, 19.0);
        let mut other = Evidence::EMPTY;
        other.fact_time("open_duration", Dur::from_secs(30));
        assert!(!best.keep_best(&other), "different layouts are not merged");
        assert_eq!(Test::from_symbol(">="), Some(Test::AtLeast));
        assert_eq!(Test::from_symbol("<"), Some(Test::Below));
    }
}

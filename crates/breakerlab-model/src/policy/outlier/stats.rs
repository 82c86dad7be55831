//! The success-rate rule's statistics: the mean of the hosts' success rates and the threshold
//! `mean − factor × stdev` below which a host is an outlier, with the population standard
//! deviation (`DetectorImpl::successRateEjectionThreshold`, outlier_detection_impl.cc
//! :611-639 at v1.28.0; gRFC A50 "Success Rate Algorithm" step 2). A leaf.

/// `mean − factor × stdev` over the `(host, rate)` pairs (rates in percent), summed in host
/// order; `f64::NEG_INFINITY` when there are none.
pub fn success_rate_threshold(rates: &[(u16, f64)], factor: f64) -> f64 {
    if rates.is_empty() {
        return f64::NEG_INFINITY;
    }
    let n = rates.len() as f64;
    let mean = rates.iter().map(|r| r.1).sum::<f64>() / n;
    let variance = rates.iter().map(|r| (r.1 - mean).powi(2)).sum::<f64>() / n;
    mean - factor * variance.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envoys_worked_example() {
        // outlier_detection_impl.cc's own comment: {50, 100, 100, 100, 100} gives mean 90,
        // variance 400, stdev 20 and, with a factor of 1.9, a threshold of 52.
        let rates = [(0, 50.0), (1, 100.0), (2, 100.0), (3, 100.0), (4, 100.0)];
        assert!((success_rate_threshold(&rates, 1.9) - 52.0).abs() < 1e-9);
        assert!((success_rate_threshold(&rates, 0.0) - 90.0).abs() < 1e-9);
        assert_eq!(success_rate_threshold(&[], 1.9), f64::NEG_INFINITY);
    }
}

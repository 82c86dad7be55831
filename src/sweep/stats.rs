//! Statistics over replicates: mean, standard deviation and the half-width of a 95% confidence
//! interval (Student t), and paired differences between two configurations run on the same
//! (scenario, replicate) request streams. Every sum is taken sequentially in input order, so the
//! results are the same bits on any thread count.

/// Mean, spread and 95% confidence interval of the values present in one group.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Stat {
    /// How many values were present (empty cells are skipped).
    pub n: usize,
    /// Their mean; `None` when no value was present.
    pub mean: Option<f64>,
    /// Sample standard deviation (n − 1 denominator); `None` below two values.
    pub sd: Option<f64>,
    /// Half-width of the 95% confidence interval of the mean, `t(0.975, n−1) · sd / √n`;
    /// `None` below two values.
    pub ci95: Option<f64>,
}

/// Describes the present values of `values` (the `None`s are empty cells and are skipped).
pub fn describe<I: IntoIterator<Item = Option<f64>>>(values: I) -> Stat {
    let present: Vec<f64> = values.into_iter().flatten().collect();
    let n = present.len();
    if n == 0 {
        return Stat::default();
    }
    let mut sum = 0.0;
    for v in &present {
        sum += v;
    }
    let mean = sum / n as f64;
    if n == 1 {
        return Stat { n, mean: Some(mean), sd: None, ci95: None };
    }
    let mut squares = 0.0;
    for v in &present {
        squares += (v - mean) * (v - mean);
    }
    let sd = (squares / (n - 1) as f64).sqrt();
    let ci95 = t_975(n - 1) * sd / (n as f64).sqrt();
    Stat { n, mean: Some(mean), sd: Some(sd), ci95: Some(ci95) }
}

/// Paired differences `b[i] − a[i]` over the indices where both are present (same scenario and
/// replicate, so the same request stream: common random numbers make the pairing valid).
pub fn paired(a: &[Option<f64>], b: &[Option<f64>]) -> Stat {
    describe(a.iter().zip(b).map(|(x, y)| match (x, y) {
        (Some(x), Some(y)) => Some(y - x),
        _ => None,
    }))
}

/// Two-sided 95% quantiles of Student's t for 1..=30 degrees of freedom.
const T_975: [f64; 30] = [
    12.706204736,
    4.302652730,
    3.182446305,
    2.776445105,
    2.570581836,
    2.446911851,
    2.364624252,
    2.306004135,
    2.262157163,
    2.228138852,
    2.200985160,
    2.178812830,
    2.160368656,
    2.144786688,
    2.131449546,
    2.119905299,
    2.109815578,
    2.100922040,
    2.093024054,
    2.085963447,
    2.079613845,
    2.073873068,
    2.068657610,
    2.063898562,
    2.059538553,
    2.055529439,
    2.051830516,
    2.048407142,
    2.045229642,
    2.042272456,
];

/// The 0.975 quantile of Student's t with `df` degrees of freedom (`df` ≥ 1): exact table up
/// to 30, the Cornish–Fisher expansion around the normal quantile beyond (error below 1e-6).
pub fn t_975(df: usize) -> f64 {
    if df == 0 {
        return f64::NAN;
    }
    if df <= T_975.len() {
        return T_975[df - 1];
    }
    let z: f64 = 1.959963984540054;
    let n = df as f64;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * n)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * n * n * n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn mean_sd_and_ci_of_a_small_sample() {
        let s = describe([Some(2.0), Some(4.0), None, Some(6.0)]);
        assert_eq!(s.n, 3);
        assert_eq!(s.mean, Some(4.0));
        assert_eq!(s.sd, Some(2.0));
        assert!(close(s.ci95.unwrap(), 4.302652730 * 2.0 / 3f64.sqrt()));
    }

    #[test]
    fn empty_and_single_values() {
        assert_eq!(describe([None, None]), Stat::default());
        assert_eq!(describe(Vec::<Option<f64>>::new()), Stat::default());
        let one = describe([None, Some(7.5)]);
        assert_eq!(one, Stat { n: 1, mean: Some(7.5), sd: None, ci95: None });
        let same = describe([Some(1.0); 4]);
        assert_eq!((same.sd, same.ci95), (Some(0.0), Some(0.0)));
    }

    #[test]
    fn t_quantiles_match_tables() {
        assert!(close(t_975(1), 12.706204736));
        assert!(close(t_975(30), 2.042272456));
        assert!((t_975(40) - 2.021075390).abs() < 1e-6);
        assert!((t_975(60) - 2.000297822).abs() < 1e-6);
        assert!((t_975(120) - 1.979930405).abs() < 1e-6);
        assert!(t_975(31) < t_975(30) && t_975(31) > t_975(40));
        assert!(t_975(0).is_nan());
    }

    #[test]
    fn paired_differences_use_only_complete_pairs() {
        let a = [Some(10.0), Some(12.0), None, Some(9.0)];
        let b = [Some(11.0), Some(15.0), Some(3.0), Some(11.0)];
        let d = paired(&a, &b);
        assert_eq!(d.n, 3);
        assert_eq!(d.mean, Some(2.0));
        assert_eq!(d.sd, Some(1.0));
        assert!(close(d.ci95.unwrap(), 4.302652730 / 3f64.sqrt()));
    }
}

//! Statistics over replicates: mean, standard deviation and the half-width of a 95% confidence
//! interval (Student t), paired differences between two configurations run on the same
//! (scenario, replicate) request streams, and Student's t quantile at any level (for intervals
//! at a stated confidence and Bonferroni-corrected bounds). Every sum is taken sequentially in
//! input order, so the results are the same bits on any thread count.

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

/// The `p` quantile of Student's t with `df` degrees of freedom, for `p` in (0.5, 1) (`df` ≥ 1):
/// exact for 1 and 2 degrees of freedom, else the root of the upper tail
/// ([`t_upper`]) found by bisection to 1e-12 relative. NaN outside that domain.
pub fn t_quantile(p: f64, df: usize) -> f64 {
    if df == 0 || !(p > 0.5 && p < 1.0) {
        return f64::NAN;
    }
    let q = 1.0 - p;
    match df {
        1 => (std::f64::consts::PI * (p - 0.5)).tan(),
        2 => (2.0 * p - 1.0) / (2.0 * p * q).sqrt(),
        _ => {
            // The upper tail falls as t grows: bracket the root, then halve the bracket.
            let (mut lo, mut hi) = (0.0f64, 2.0f64);
            while t_upper(hi, df) > q {
                lo = hi;
                hi *= 2.0;
            }
            while hi - lo > 1e-12 * hi {
                let mid = 0.5 * (lo + hi);
                if t_upper(mid, df) > q {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            0.5 * (lo + hi)
        }
    }
}

/// P(T > t) for Student's t with `df` degrees of freedom and `t` ≥ 0:
/// ½ · I_{df/(df+t²)}(df/2, ½), the regularized incomplete beta function.
pub fn t_upper(t: f64, df: usize) -> f64 {
    let n = df as f64;
    0.5 * beta_regularized(n / (n + t * t), n / 2.0, 0.5)
}

/// The regularized incomplete beta function I_x(a, b), by its continued fraction (modified
/// Lentz), on the side where it converges fast.
fn beta_regularized(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function.
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    d = 1.0 / if d.abs() < TINY { TINY } else { d };
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        for aa in
            [m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))]
        {
            d = 1.0 + aa * d;
            d = 1.0 / if d.abs() < TINY { TINY } else { d };
            c = 1.0 + aa / c;
            if c.abs() < TINY {
                c = TINY;
            }
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms: about 15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        sum += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// Paired differences described at a stated confidence: how many pairs, their mean and
/// standard deviation, and the half-width of the two-sided interval of the mean at
/// `confidence` (Student t, n − 1 degrees of freedom; `None` below two pairs).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Interval {
    /// Pairs present.
    pub n: usize,
    /// Mean difference (`None` without pairs).
    pub mean: Option<f64>,
    /// Sample standard deviation (`None` below two pairs).
    pub sd: Option<f64>,
    /// Half-width of the two-sided interval at the stated confidence.
    pub half: Option<f64>,
}

impl Interval {
    /// `b − a` over the indices where both are present, at `confidence` (two-sided).
    pub fn paired(a: &[Option<f64>], b: &[Option<f64>], confidence: f64) -> Interval {
        let d = paired(a, b);
        let t = t_quantile(0.5 + confidence / 2.0, d.n.saturating_sub(1));
        let half = match (d.sd, d.n) {
            (Some(sd), n) if n >= 2 => Some(t * sd / (n as f64).sqrt()),
            _ => None,
        };
        Interval { n: d.n, mean: d.mean, sd: d.sd, half }
    }
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
    fn t_quantiles_at_any_level_match_published_values() {
        // The 0.975 table, from the incomplete beta function.
        for df in [3, 4, 9, 30] {
            assert!((t_quantile(0.975, df) - t_975(df)).abs() < 1e-8, "{df}");
        }
        assert!((t_quantile(0.975, 1) - 12.706204736).abs() < 1e-8);
        assert!((t_quantile(0.975, 2) - 4.302652730).abs() < 1e-8);
        // One-sided 99 % and 99.9 %, and far tails (R: qt(p, df)).
        assert!((t_quantile(0.99, 5) - 3.364929997).abs() < 1e-8);
        assert!((t_quantile(0.999, 9) - 4.296806).abs() < 1e-6);
        // Checked by integrating the density: P(T > t) = 0.05 / 999 and 1e-6.
        assert!((t_quantile(1.0 - 0.05 / 999.0, 9) - 6.592814).abs() < 1e-5);
        assert!((t_quantile(1.0 - 1e-6, 4) - 41.57785).abs() < 1e-4);
        assert!((t_quantile(0.95, 1000) - 1.646379).abs() < 1e-5);
        assert!(t_quantile(0.5, 3).is_nan() && t_quantile(0.9, 0).is_nan());
        assert!((t_upper(2.228138852, 10) - 0.025).abs() < 1e-9);
    }

    #[test]
    fn paired_intervals_at_a_stated_confidence() {
        let a = [Some(10.0), Some(12.0), None, Some(9.0)];
        let b = [Some(11.0), Some(15.0), Some(3.0), Some(11.0)];
        let i = Interval::paired(&a, &b, 0.95);
        assert_eq!((i.n, i.mean, i.sd), (3, Some(2.0), Some(1.0)));
        assert!(close(i.half.unwrap(), 4.302652730 / 3f64.sqrt()));
        let wide = Interval::paired(&a, &b, 0.5);
        assert!(wide.half.unwrap() < i.half.unwrap());
        let one = Interval::paired(&[Some(1.0)], &[Some(3.0)], 0.95);
        assert_eq!((one.n, one.mean, one.half), (1, Some(2.0), None));
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

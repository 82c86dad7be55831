//! A latency distribution that passes exactly through an interval's logged percentiles.
//!
//! The quantile function is interpolated piecewise-linearly in (normal score, log latency)
//! space: between two logged percentiles the latency is lognormal-shaped, and `Q(q) = x` holds
//! exactly at every logged point, whichever subset of p50/p90/p95/p99 was logged. Below the lowest
//! and above the highest logged point the tails continue with the slope (log-spread) of the
//! nearest segment, or `tail_sigma` when there is none (a single logged percentile) or it is flat,
//! truncated at the one-in-a-million quantiles so one draw cannot produce an absurd latency.

/// The percentiles an interval trace may log, in this order everywhere.
pub const QUANTILES: [f64; 4] = [0.50, 0.90, 0.95, 0.99];
/// Names of [`QUANTILES`], as used in options and SLO rules.
pub const QUANTILE_NAMES: [&str; 4] = ["p50", "p90", "p95", "p99"];
/// Normal scores Φ⁻¹(q) of [`QUANTILES`].
const Z: [f64; 4] = [0.0, 1.281_551_565_544_600_5, 1.644_853_626_951_472_2, 2.326_347_874_040_840_8];
/// Φ⁻¹(1 − 10⁻⁶): where the tails are truncated.
const Z_CAP: f64 = 4.753_424_308_822_899;

/// A fitted latency distribution: knots in (normal score, ln µs) and the tail slopes.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Fit {
    n: usize,
    z: [f64; 4],
    y: [f64; 4],
    lo_slope: f64,
    hi_slope: f64,
}

impl Fit {
    /// Fits the logged percentiles `micros` (NaN where not logged; at least one present).
    ///
    /// Percentiles that decrease with q (rounding in the source) are raised to the previous
    /// value; the second value says whether that happened. Latencies below 1 µs count as 1 µs.
    pub fn new(micros: &[f64; 4], tail_sigma: f64) -> (Fit, bool) {
        let mut fit = Fit { n: 0, z: [0.0; 4], y: [0.0; 4], lo_slope: tail_sigma, hi_slope: tail_sigma };
        let mut repaired = false;
        for (k, &x) in micros.iter().enumerate() {
            if x.is_nan() {
                continue;
            }
            let mut y = x.max(1.0).ln();
            if fit.n > 0 && y < fit.y[fit.n - 1] {
                y = fit.y[fit.n - 1];
                repaired = true;
            }
            fit.z[fit.n] = Z[k];
            fit.y[fit.n] = y;
            fit.n += 1;
        }
        if fit.n >= 2 {
            let first = (fit.y[1] - fit.y[0]) / (fit.z[1] - fit.z[0]);
            let last = (fit.y[fit.n - 1] - fit.y[fit.n - 2]) / (fit.z[fit.n - 1] - fit.z[fit.n - 2]);
            if first > 0.0 {
                fit.lo_slope = first;
            }
            if last > 0.0 {
                fit.hi_slope = last;
            }
        }
        (fit, repaired)
    }

    /// True when no percentile was logged (the fit cannot be used).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The latency in µs at normal score `z` (clamped to the truncation points).
    pub fn at_score(&self, z: f64) -> f64 {
        let z = z.clamp(-Z_CAP, Z_CAP);
        let n = self.n;
        if n == 0 {
            return 1.0;
        }
        let y = if z <= self.z[0] {
            self.y[0] + (z - self.z[0]) * self.lo_slope
        } else if z >= self.z[n - 1] {
            self.y[n - 1] + (z - self.z[n - 1]) * self.hi_slope
        } else {
            let mut k = 1;
            while z > self.z[k] {
                k += 1;
            }
            let t = (z - self.z[k - 1]) / (self.z[k] - self.z[k - 1]);
            self.y[k - 1] + t * (self.y[k] - self.y[k - 1])
        };
        y.exp()
    }

    /// The latency in µs at quantile `q` in (0, 1).
    pub fn quantile(&self, q: f64) -> f64 {
        self.at_score(probit(q))
    }
}

/// The fits of a trace's intervals, each made once per percentile set seen recently: traces
/// repeat the same logged values often (rounded latencies, quiet hours), and a hit costs a hash
/// of the four values' bits instead of four logarithms. Intervals hold an index into
/// [`FitCache::fits`]. Two-way set-associative: a set's pair of slots comes from a hash of its
/// bits; a new set takes the first slot and moves the one there to the second.
pub struct FitCache {
    tail_sigma: f64,
    /// The slots, in pairs; an index of `usize::MAX` marks an empty one.
    slots: Box<[Slot; 2 << Self::PAIRS_LOG2]>,
    fits: Vec<Fit>,
    repaired: Vec<bool>,
}

/// A cache slot: a set's bits, its fit's index and whether it was repaired.
type Slot = ([u64; 4], usize, bool);

impl FitCache {
    const PAIRS_LOG2: u32 = 8;
    const EMPTY: Slot = ([0; 4], usize::MAX, false);

    /// An empty cache for fits with this tail spread.
    pub fn new(tail_sigma: f64) -> FitCache {
        FitCache {
            tail_sigma,
            // Made on the heap (a boxed array would be made on the stack and copied).
            slots: vec![Self::EMPTY; 2 << Self::PAIRS_LOG2]
                .into_boxed_slice()
                .try_into()
                .unwrap_or_else(|_| Box::new([Self::EMPTY; 2 << Self::PAIRS_LOG2])),
            fits: Vec::new(),
            repaired: Vec::new(),
        }
    }

    /// The index in [`fits`](Self::fits) of what [`Fit::new`] gives for `micros` (bit-identical:
    /// the same call, made once per set while it stays cached), and whether it was repaired.
    #[inline(always)]
    pub fn fit(&mut self, micros: &[f64; 4]) -> (usize, bool) {
        let key = micros.map(f64::to_bits);
        // The four values' bits rotated apart and multiplied: the product's top bits (the pair)
        // depend on every bit.
        let mixed = (key[0] ^ key[1].rotate_left(16) ^ key[2].rotate_left(32) ^ key[3].rotate_left(48))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let first = 2 * (mixed >> (64 - Self::PAIRS_LOG2)) as usize;
        let Some(pair) = self.slots.get(first..first + 2) else { return self.add(micros) };
        for (k, index, repaired) in pair {
            if *k == key && *index != usize::MAX {
                return (*index, *repaired);
            }
        }
        self.miss(micros, key, first)
    }

    /// [`fit`](Self::fit) for a set not cached: a new fit, in the pair's first slot.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, micros: &[f64; 4], key: [u64; 4], first: usize) -> (usize, bool) {
        let (index, repaired) = self.add(micros);
        self.slots[first + 1] = std::mem::replace(&mut self.slots[first], (key, index, repaired));
        (index, repaired)
    }

    /// Adds [`Fit::new`] of `micros` to the table (not to the cache): its index, and whether it
    /// was repaired.
    pub fn add(&mut self, micros: &[f64; 4]) -> (usize, bool) {
        let (fit, repaired) = Fit::new(micros, self.tail_sigma);
        let index = self.fits.len();
        self.fits.push(fit);
        self.repaired.push(repaired);
        (index, repaired)
    }

    /// Whether the fit at `index` was repaired (false for an index never given).
    pub fn repaired(&self, index: usize) -> bool {
        self.repaired.get(index).copied().unwrap_or(false)
    }

    /// The fits made, by index.
    pub fn fits(&self) -> &[Fit] {
        &self.fits
    }

    /// The fits made, by index, without the cache.
    pub fn into_fits(self) -> Vec<Fit> {
        self.fits
    }
}

/// The standard normal quantile function Φ⁻¹(p), p in (0, 1) (Acklam's rational approximation,
/// relative error below 1.2·10⁻⁹; plenty for latencies).
pub fn probit(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] =
        [7.784_695_709_041_462e-3, 3.224_671_290_700_398e-1, 2.445_134_137_142_996, 3.754_408_661_907_416];
    const LOW: f64 = 0.024_25;
    if p <= 0.0 {
        return -Z_CAP;
    }
    if p >= 1.0 {
        return Z_CAP;
    }
    if p < LOW {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    }
}

/// A uniform draw strictly inside (0, 1) from 53 random bits.
pub fn open_unit<R: rand::Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probit_matches_known_scores() {
        for (k, q) in QUANTILES.iter().enumerate() {
            assert!((probit(*q) - Z[k]).abs() < 1e-8, "{q}");
        }
        assert!((probit(0.01) + Z[3]).abs() < 1e-8);
        assert!((probit(1e-6) + Z_CAP).abs() < 1e-6);
    }

    #[test]
    fn fit_passes_through_every_logged_point() {
        let logged = [164_285.7, 733_333.3, 966_666.7, 2_150_000.0];
        let (fit, repaired) = Fit::new(&logged, 0.5);
        assert!(!repaired);
        for (k, q) in QUANTILES.iter().enumerate() {
            let x = fit.quantile(*q);
            assert!((x / logged[k] - 1.0).abs() < 1e-6, "p{q}: {x} vs {}", logged[k]);
        }
        // Tails keep going in the direction of their segments.
        assert!(fit.quantile(0.1) < logged[0]);
        assert!(fit.quantile(0.999) > logged[3]);
    }

    #[test]
    fn the_cache_gives_what_a_fit_gives() {
        let mut cache = FitCache::new(0.5);
        let sets =
            [[100.0, 90.0, f64::NAN, 300.0], [8.0, 9.0, 10.0, 11.0], [f64::NAN; 4], [-0.0, 0.0, 1.0, 2.0]];
        for _ in 0..3 {
            for (i, set) in sets.iter().enumerate() {
                let mut set = *set;
                set[3] += i as f64;
                let (index, repaired) = cache.fit(&set);
                let fit = cache.fits()[index];
                assert_eq!(format!("{:?}", (fit, repaired)), format!("{:?}", Fit::new(&set, 0.5)));
            }
        }
    }

    #[test]
    fn partial_and_single_percentiles() {
        let (fit, _) = Fit::new(&[f64::NAN, f64::NAN, 8_000.0, f64::NAN], 0.5);
        assert!((fit.quantile(0.95) / 8_000.0 - 1.0).abs() < 1e-9);
        // One point: lognormal with sigma 0.5 around it.
        let expect_p50 = 8_000.0 * (-0.5 * Z[2]).exp();
        assert!((fit.quantile(0.5) / expect_p50 - 1.0).abs() < 1e-6);
        let (fit, repaired) = Fit::new(&[100.0, 90.0, f64::NAN, 300.0], 0.5);
        assert!(repaired);
        assert!((fit.quantile(0.9) - 100.0).abs() < 1e-6);
        let (empty, _) = Fit::new(&[f64::NAN; 4], 0.5);
        assert!(empty.is_empty());
        assert_eq!(empty.quantile(0.5), 1.0);
    }
}

//! Central moments up to the third or fourth: the raw moments of
//! [`Moments`] (count, shift, offset, M2) with M3 and M4 beside them,
//! updated by Pébay's one-pass formulas and merged by his pairwise ones
//! (P. Pébay, "Formulas for robust, one-pass parallel computation of
//! covariances and arbitrary-order statistical moments", Sandia report
//! SAND2008-6212, 2008).
//!
//! The count, the mean and M2 are exactly a [`Moments`], pushed and merged
//! by its code: the shift taken from the data, its re-basing, the overflow
//! and non-finite cases. M3 and M4 are sums of powers of deviations from the
//! mean, so they do not depend on the shift at all; each update needs only
//! the deviation of the new value (or of the other side's mean) from the
//! mean before the step, which is formed the way `Moments` forms it,
//! `(x − shift) − offset`, so it is of the size of the spread even when the
//! mean is 10⁶ times larger.

use super::Moments;
use crate::{Element, Error, Float};

/// Count, shift, mean offset, M2, M3 and (when `FOURTH`) M4 of a set of
/// values, where `Mp = Σ (x − mean)^p`. Without `FOURTH`, `m4` stays 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct HigherMoments<F, const FOURTH: bool> {
    pub(crate) base: Moments<F>,
    pub(crate) m3: F,
    pub(crate) m4: F,
}

impl<F: Float, const FOURTH: bool> Default for HigherMoments<F, FOURTH> {
    /// No values.
    fn default() -> Self {
        Self {
            base: Moments::default(),
            m3: F::zero(),
            m4: F::zero(),
        }
    }
}

/// `x`, or 0 when `FOURTH` is off: the value M4 takes.
#[inline]
fn fourth<F: Float, const FOURTH: bool>(x: F) -> F {
    if FOURTH { x } else { F::zero() }
}

impl<F: Float, const FOURTH: bool> HigherMoments<F, FOURTH> {
    /// The moments of a run of values, one update each: the robust path
    /// the slice kernels fall back to when their sums are not finite.
    pub(crate) fn of_values<S: Element>(xs: impl IntoIterator<Item = S>) -> Self {
        let mut m = Self::default();
        for x in xs {
            m.push(F::from_f64(x.widen()));
        }
        m
    }

    /// One update. With `d` the new value's deviation from the old mean
    /// and `n` the new count (Pébay, eq. 1.4 with one value on one side):
    ///
    /// - M4 += d⁴(n−1)(n²−3n+3)/n³ + 6 d² M2/n² − 4 d M3/n
    /// - M3 += d³(n−1)(n−2)/n² − 3 d M2/n
    /// - M2 += d²(n−1)/n (by [`Moments::push`])
    ///
    /// A deviation that is not finite (a NaN or ±∞ pushed, or finite values
    /// whose difference overflows) makes M3 and M4 NaN: they are not
    /// representable, and the statistics built on them say so.
    #[inline]
    pub(crate) fn push(&mut self, x: F) {
        if self.base.count == 0 {
            self.base.push(x);
            let zero = if x.is_finite() { F::zero() } else { F::nan() };
            self.m3 = zero;
            self.m4 = fourth::<F, FOURTH>(zero);
            return;
        }
        let d = (x - self.base.shift) - self.base.offset;
        let m2 = self.base.m2;
        self.base.push(x);
        if !d.is_finite() {
            self.m3 = F::nan();
            self.m4 = fourth::<F, FOURTH>(F::nan());
            return;
        }
        let n = F::from_count(self.base.count);
        let one = F::one();
        let two = one + one;
        let three = two + one;
        let dn = d / n;
        // d²(n − 1)/n, the increment of M2.
        let term = d * dn * (n - one);
        if FOURTH {
            let six = three + three;
            let four = two + two;
            self.m4 = self.m4 + term * dn * dn * (n * n - three * n + three) + six * dn * dn * m2
                - four * dn * self.m3;
        }
        self.m3 = self.m3 + term * dn * (n - two) - three * dn * m2;
    }

    /// Pébay's pairwise update (eq. 3.1 for p = 3, 4), written with the
    /// weights `wa = na/n`, `wb = nb/n` so that no product of two counts is
    /// formed (it would overflow `f32` near 2⁶⁴ values):
    ///
    /// - M3 = M3a + M3b + δ³ na wb (wa − wb) + 3δ (wa M2b − wb M2a)
    /// - M4 = M4a + M4b + δ⁴ na wb (wa² − wa wb + wb²)
    ///   + 6δ² (wa² M2b + wb² M2a) + 4δ (wa M3b − wb M3a)
    ///
    /// with δ the difference of the means, formed from the shifts and
    /// offsets as [`Moments::merge`] forms it. Count, mean and M2 are that
    /// merge's; when the count saturates, M3 and M4 are scaled as it scales
    /// M2.
    #[inline]
    pub(crate) fn merge(&mut self, other: &Self) {
        if other.base.count == 0 {
            return;
        }
        if self.base.count == 0 {
            *self = *other;
            return;
        }
        let na = F::from_count(self.base.count);
        let nb = F::from_count(other.base.count);
        let (n, scale) = match self.base.count.checked_add(other.base.count) {
            Some(count) => (F::from_count(count), F::one()),
            None => (na + nb, F::from_count(u64::MAX) / (na + nb)),
        };
        let delta = (other.base.shift - self.base.shift) + (other.base.offset - self.base.offset);
        let (m3, m4) = if delta.is_finite() {
            let (wa, wb) = (na / n, nb / n);
            let (a, b) = (&self.base, &other.base);
            let one = F::one();
            let three = one + one + one;
            let d2 = delta * delta;
            let m3 = self.m3
                + other.m3
                + d2 * delta * na * wb * (wa - wb)
                + three * delta * (wa * b.m2 - wb * a.m2);
            let m4 = if FOURTH {
                let four = three + one;
                let six = three + three;
                self.m4
                    + other.m4
                    + d2 * d2 * na * wb * (wa * wa - wa * wb + wb * wb)
                    + six * d2 * (wa * wa * b.m2 + wb * wb * a.m2)
                    + four * delta * (wa * other.m3 - wb * self.m3)
            } else {
                F::zero()
            };
            (m3 * scale, m4 * scale)
        } else {
            (F::nan(), fourth::<F, FOURTH>(F::nan()))
        };
        self.base.merge(&other.base);
        self.m3 = m3;
        self.m4 = m4;
    }

    /// `M2/n`, or `None` when there are no values or M2 is 0: the
    /// denominator of every shape statistic.
    #[inline]
    fn spread(&self) -> Option<F> {
        let m2 = self.base.m2();
        (self.base.count > 0 && m2 != F::zero()).then(|| m2 / F::from_count(self.base.count))
    }

    /// g1 = (M3/n) / (M2/n)^1.5, `None` when the variance is 0.
    pub(crate) fn skewness(&self) -> Option<F> {
        self.spread().map(|var| {
            let m3 = self.m3 / F::from_count(self.base.count);
            m3 / var / var.sqrt()
        })
    }

    /// G1 = g1 √(n(n − 1))/(n − 2), `None` below 3 values or when the
    /// variance is 0.
    pub(crate) fn sample_skewness(&self) -> Option<F> {
        if self.base.count < 3 {
            return None;
        }
        let n = F::from_count(self.base.count);
        let one = F::one();
        self.skewness()
            .map(|g1| g1 * (n * (n - one)).sqrt() / (n - one - one))
    }

    /// g2 = (M4/n) / (M2/n)² − 3, `None` when the variance is 0.
    pub(crate) fn kurtosis(&self) -> Option<F> {
        self.spread().map(|var| {
            let m4 = self.m4 / F::from_count(self.base.count);
            let three = F::one() + F::one() + F::one();
            m4 / var / var - three
        })
    }

    /// G2 = ((n + 1) g2 + 6)(n − 1)/((n − 2)(n − 3)), `None` below 4
    /// values or when the variance is 0.
    pub(crate) fn sample_kurtosis(&self) -> Option<F> {
        if self.base.count < 4 {
            return None;
        }
        let n = F::from_count(self.base.count);
        let one = F::one();
        let two = one + one;
        let three = two + one;
        let six = three + three;
        self.kurtosis()
            .map(|g2| ((n + one) * g2 + six) * ((n - one) / ((n - two) * (n - three))))
    }

    /// Converts to another float type, the base as [`Moments::cast`] does.
    pub(crate) fn cast<G: Float>(&self) -> HigherMoments<G, FOURTH> {
        HigherMoments {
            base: self.base.cast(),
            m3: G::from_f64(self.m3.as_f64()),
            m4: G::from_f64(self.m4.as_f64()),
        }
    }

    /// Checks the invariants of restored state: those of [`Moments`], and
    /// M3, M4 0 (or NaN) for fewer than two values, M4 never negative, M4
    /// 0 when it is not tracked.
    pub(crate) fn validate(&self) -> Result<(), Error> {
        self.base.validate()?;
        let zero_or_nan = |x: F| x == F::zero() || x.is_nan();
        if self.base.count == 0 && (self.m3 != F::zero() || self.m4 != F::zero()) {
            return Err(Error::state("count is 0 but the moments are not"));
        }
        if self.base.count == 1 && !(zero_or_nan(self.m3) && zero_or_nan(self.m4)) {
            return Err(Error::state("m3 and m4 must be 0 when count is 1"));
        }
        if self.m4 < F::zero() {
            return Err(Error::state(alloc::format!(
                "m4 must be non-negative, got {:?}",
                self.m4
            )));
        }
        if !FOURTH && self.m4 != F::zero() {
            return Err(Error::state("m4 is not tracked and must be 0"));
        }
        // The value (or merge) that makes M2 NaN, a NaN or ±∞, has a
        // deviation that is not finite, and that makes M3 and M4 NaN too;
        // one finite value leaves them 0 (they may be NaN beside a finite
        // M2 only from two values on, whose deviation overflowed).
        let tracked_nan = |x: F| x.is_nan() || (!FOURTH && x == F::zero());
        if self.base.m2.is_nan() && !(self.m3.is_nan() && tracked_nan(self.m4)) {
            return Err(Error::state(alloc::format!(
                "m2 is NaN (a NaN or infinite value went in) but m3 is {:?} and m4 {:?}: \
                 that value makes them NaN too",
                self.m3,
                self.m4
            )));
        }
        if self.base.count == 1
            && !self.base.m2.is_nan()
            && (self.m3 != F::zero() || self.m4 != F::zero())
        {
            return Err(Error::state(alloc::format!(
                "m3 and m4 must be 0 for one finite value, got {:?} and {:?}",
                self.m3,
                self.m4
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type K = HigherMoments<f64, true>;

    fn pushed(xs: &[f64]) -> K {
        let mut m = K::default();
        xs.iter().for_each(|&x| m.push(x));
        m
    }

    #[test]
    fn small_integers_give_the_central_moments() {
        // Deviations from the mean 4: −3, −2, −1, 0, 1, 5: M2 = 40, M3 = 90,
        // M4 = 724 (the running means are not all exact: 1e-14).
        let m = pushed(&[1.0, 2.0, 3.0, 4.0, 5.0, 9.0]);
        assert_eq!(m.base.mean(), Some(4.0));
        assert!((m.base.m2 - 40.0).abs() < 1e-13 * 40.0, "{}", m.base.m2);
        assert!((m.m3 - 90.0).abs() < 1e-13 * 90.0, "{}", m.m3);
        assert!((m.m4 - 724.0).abs() < 1e-13 * 724.0, "{}", m.m4);
    }

    #[test]
    fn merge_equals_push_and_has_an_identity() {
        let xs = [1.0, 2.0, 3.0, 4.0, 8.0, -3.0, 0.5];
        let all = pushed(&xs);
        for cut in 0..=xs.len() {
            let mut a = pushed(&xs[..cut]);
            a.merge(&pushed(&xs[cut..]));
            assert_eq!(a.base.count, all.base.count);
            assert!((a.m3 - all.m3).abs() < 1e-12 * all.m3.abs(), "{cut}");
            assert!((a.m4 - all.m4).abs() < 1e-12 * all.m4.abs(), "{cut}");
        }
        let mut e = K::default();
        e.merge(&all);
        assert_eq!(e, all);
    }

    #[test]
    fn skewness_only_keeps_m4_at_zero() {
        let mut s = HigherMoments::<f64, false>::default();
        for x in [1.0, 5.0, 2.0] {
            s.push(x);
        }
        let t = s;
        s.merge(&t);
        assert_eq!(s.m4, 0.0);
        assert!(s.validate().is_ok());
        assert!(s.kurtosis().is_some()); // not exposed by Skewness
    }
}

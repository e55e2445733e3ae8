//! The argument checks the normalization functions share, in one place, so each
//! rule has one wording: a per-channel vector of the wrong length, an eps
//! outside its range.

use crate::{Error, Float};

/// A per-channel vector must have one value per channel.
pub(super) fn channel_len<F>(what: &'static str, v: &[F], channels: usize) -> Result<(), Error> {
    if v.len() == channels {
        Ok(())
    } else {
        Err(Error::length(what, channels, v.len()))
    }
}

/// [`channel_len`] for an optional vector (γ or β, absent meaning 1 or 0).
pub(super) fn optional_channel_len<F>(
    what: &'static str,
    v: Option<&[F]>,
    channels: usize,
) -> Result<(), Error> {
    v.map_or(Ok(()), |v| channel_len(what, v, channels))
}

/// An eps must be finite and non-negative.
pub(super) fn eps<F: Float>(eps: F) -> Result<(), Error> {
    if eps >= F::zero() && eps.is_finite() {
        Ok(())
    } else {
        Err(Error::parameter(
            "eps",
            eps.as_f64(),
            "finite and non-negative",
        ))
    }
}

/// [`eps`], and at least cuDNN's minimum where `min_eps` is that minimum.
pub(super) fn eps_at_least<F: Float>(value: F, min_eps: F) -> Result<(), Error> {
    eps(value)?;
    if value < min_eps {
        return Err(Error::parameter(
            "eps",
            value.as_f64(),
            "at least CUDNN_BN_MIN_EPSILON = 1e-5 for cuDNN",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use alloc::string::ToString;

    #[test]
    fn lengths_and_eps_name_the_value_and_the_rule() {
        assert!(channel_len("beta", &[1.0, 2.0], 2).is_ok());
        let e = channel_len("beta", &[1.0], 2).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::LengthMismatch { .. }));
        assert!(optional_channel_len::<f64>("gamma", None, 3).is_ok());
        assert!(optional_channel_len("gamma", Some(&[1.0_f32][..]), 3).is_err());
        assert!(eps(0.0_f64).is_ok());
        for bad in [-1e-9, f64::NAN, f64::INFINITY] {
            assert!(eps(bad).unwrap_err().to_string().contains("eps"));
        }
        assert!(eps_at_least(1e-5_f64, 1e-5).is_ok());
        let e = eps_at_least(1e-6_f64, 1e-5).unwrap_err();
        assert!(e.to_string().contains("CUDNN_BN_MIN_EPSILON"));
    }
}

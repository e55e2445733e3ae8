//! A slice pushed through the add/remove engine ([`Window`]), with the
//! push loop's state: the windows' `extend_from_slice`.
//!
//! A push into a full window of finite values whose ring head has not
//! reached its wrap is a replacement of the oldest value: the engine's
//! fast path. Over a slice those pushes come in runs (up to `window − 1`
//! of them between two wraps), and within a run the value that leaves is
//! the ring's next one and the value that enters the slice's next one. A
//! run goes through [`WindowStats::replace_run`]: the replacement and the
//! check for a rebuild in one loop over the two slices, and the ring
//! takes the run's values in one copy afterwards. Every other push —
//! filling, a non-finite value, the wrap, and the rebuild a check calls
//! for — is the push itself. So the state after a slice is the push
//! loop's bit for bit.

use super::super::window::{Window, WindowStats};
use crate::Float;

impl<F: Float, S: WindowStats<F>> Window<F, S> {
    /// Pushes every value of `xs` in order: the state is the push loop's,
    /// bit for bit.
    pub(crate) fn extend_from_slice(&mut self, xs: &[F]) {
        let mut i = 0;
        while let Some(&x) = xs.get(i) {
            let olds = self.ring.run_below(self.fast_until);
            if !olds.is_empty() {
                let news = xs.get(i..).unwrap_or(&[]);
                let (k, due) = self.total.replace_run(olds, news);
                self.ring.overwrite_run(news.get(..k).unwrap_or(&[]));
                i += k;
                if due {
                    self.rebuild();
                }
                if k > 0 {
                    continue;
                }
            }
            if !self.wrap_push(x) {
                self.push(x);
            }
            i += 1;
        }
    }
}

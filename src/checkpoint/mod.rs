//! Checkpoints: how every accumulator's state is written and read back
//! (feature `serde`).
//!
//! Two pieces, shared by every state type in every family:
//!
//! - [`float`]: the one way a serialized state writes a float, lossless
//!   in any format (the float itself in binary formats; its shortest exact
//!   decimal, or the name of a non-finite value, as a string in
//!   human-readable ones). Every `F` or `f64` field of a state takes it
//!   through `#[serde(with = "crate::checkpoint::float")]`.
//! - [`path`]: the one way a state is read (`restore_from!`): the state
//!   type through a deserializer that keeps the path of fields and
//!   indices, then the type's own `TryFrom<State>` validation, so an error
//!   in a human-readable format names the field it failed at.
//!
//! The state types themselves, and what each refuses, live beside the
//! types they restore.

pub(crate) mod float;
pub(crate) mod path;

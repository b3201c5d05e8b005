//! The AlphaZero loop of Brandubh Zero.
//!
//! - [`selfplay`]: many games at once on worker threads, each worker batching the leaves
//!   of all its games' searches into one evaluator call;
//! - [`run`]: `brandubh train` as a library: per iteration self-play → replay chunks →
//!   training on the window → checkpoint → metrics and plots, resumable after a crash;
//! - [`actor`], [`learner`], [`lease`], [`remote`], [`status`]: the same run spread over
//!   machines on shared object storage (`brandubh-store`): actors play and upload chunks,
//!   one learner (enforced by its lease) trains on them and publishes networks; `status`
//!   reads a run without touching it and audits its books.
//!
//! Architecture invariant: this crate uses the network only through `brandubh-net`'s API
//! and never names burn types; it knows nothing of clap or indicatif (progress is reported
//! through callbacks), and reaches a store only through `brandubh-store`'s blocking API.
#![warn(missing_docs)]

pub mod actor;
pub mod learner;
pub mod lease;
pub mod remote;
pub mod run;
pub mod selfplay;
pub mod status;

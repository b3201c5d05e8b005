//! Training-run plumbing for Brandubh Zero.
#![warn(missing_docs)]

pub mod config;
pub mod fsutil;
pub mod replay;

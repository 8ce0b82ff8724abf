//! The safety audit from outside the crate: the sample skills (a true positive and a near miss
//! for every rule), the measurement over the real-world corpus, and the held-out labelled set.

mod corpus;
mod heldout;
mod samples;

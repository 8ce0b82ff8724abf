//! The safety audit from outside the crate: the sample skills (a true positive and a near miss
//! for every rule) and the measurement over the real-world corpus.

mod corpus;
mod samples;

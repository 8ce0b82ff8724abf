//! The directory server (axum). Arrives with the serve issue.

//! The JSON API and the skill-sharing endpoints, one handler module per resource: renderings
//! of the read model's answers (`directory`), mounted by the route table (`router`).

pub(crate) mod admin;
pub(crate) mod changes;
pub(crate) mod domains;
pub(crate) mod health;
pub(crate) mod mirror;
pub(crate) mod publish;
pub(crate) mod search;
pub(crate) mod sharing;
pub(crate) mod skills;

//! Agent specs: the strings that name an agent on the command line, in configs and in
//! stored ladder results.
//!
//! ```text
//! SPEC    := KIND [":" ARG] ("@" KEY "=" VALUE)*
//!
//! random                 uniformly random legal moves
//! greedy                 one ply of lookahead over the search crate's heuristic
//! mcts:N                 MCTS with random-rollout values, N simulations per move
//!                          options: @algo=puct|gumbel (default puct)
//!                                   @rollout=PLIES (longest playout, default 100)
//! alphabeta:D            alpha-beta to depth D plies (1-64)
//! alphabeta:1s           alpha-beta with iterative deepening for this long per move;
//! alphabeta:500ms          times in s (decimals allowed) or ms, 1 ms to 1 h
//! run:DIR                the latest checkpoint of the run directory DIR
//!                          (DIR/checkpoints/*.json with its .safetensors, highest step)
//! ckpt:PATH              one checkpoint: its stem (DIR/iter-000012) or either file
//!                          options for both: @sims=N (simulations, default 64)
//!                                            @algo=gumbel|puct (default: the run's)
//!                                            @solver=yes|no (default: the run's)
//!                                            @prove=PLIES (exact proofs of the root
//!                                              moves this deep, 0-15; default 0: off)
//!                                            @verify=PLIES (exact check of the move to
//!                                              play this deep, 0-15; default 0: off)
//!                          the other search constants are the run's (its config.toml;
//!                          the search crate's defaults for a checkpoint outside a run)
//! agent:FILE             an exported agent file (brandubh export), with the search
//! FILE.agent               settings stored in it; options: @sims=N (default: the
//!                          file's) or @time=TIME (per move, e.g. 50ms: the search stops
//!                          at that deadline), @reuse=yes|no (keep the subtree of the
//!                          moves played between turns; default yes), @solver=yes|no
//!                          (prove wins and losses in the tree; default: the file's,
//!                          which is yes unless it says otherwise), @prove=PLIES (exact
//!                          proofs of the root moves this deep before each search, 0-15;
//!                          default: the file's, 0 = off unless it says otherwise),
//!                          @verify=PLIES (exact check of the move to play this deep
//!                          after each search, 0-15; default: the file's, 0 = off)
//! ```
//!
//! Examples: `mcts:1000`, `alphabeta:3`, `run:runs/quick@sims=32`,
//! `ckpt:runs/quick/checkpoints/iter-000012@algo=puct@sims=200`,
//! `agent:models/brandubh-v1.agent`, `models/brandubh-v1.agent@sims=400`.
//!
//! Every search plays without noise (PUCT: no Dirichlet noise, temperature 0; Gumbel: no
//! Gumbel noise); each match starts from a seeded opening instead. Paths may not contain
//! `@`. [`AgentSpec`]'s `Display` writes the canonical form (options in a fixed order,
//! defaults left out), which is how the ladder names agents in its stored results.
//!
//! **Extension point.** A new kind adds a variant to [`AgentSpec`], an arm to
//! [`AgentSpec::from_str`]'s `match kind` and one to [`crate::Agent::prepare`], as the
//! `.agent` files did.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use brandubh_search::{Algorithm, MAX_ROOT_PROOF_PLIES, MAX_SIMULATIONS, SearchSettings};
use thiserror::Error;

/// Simulations per move of a network agent unless `@sims` says otherwise.
pub const DEFAULT_NET_SIMULATIONS: u32 = 64;
/// Longest random playout of `mcts:N` unless `@rollout` says otherwise.
pub const DEFAULT_ROLLOUT_PLIES: u32 = 100;

/// How far alpha-beta searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AlphaBetaLimit {
    /// A fixed depth in plies.
    Depth(u32),
    /// A time per move (iterative deepening).
    Time(Duration),
}

/// Where a network agent's weights come from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NetSource {
    /// The latest checkpoint of a run directory.
    Run(PathBuf),
    /// One checkpoint, by stem or file name.
    Checkpoint(PathBuf),
}

/// A parsed agent spec (see the module documentation for the syntax).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AgentSpec {
    /// `random`.
    Random,
    /// `greedy`.
    Greedy,
    /// `mcts:N`: rollout MCTS.
    Mcts {
        /// Simulations per move.
        simulations: u32,
        /// PUCT or Gumbel.
        algorithm: Algorithm,
        /// Longest random playout, in plies.
        rollout_plies: u32,
    },
    /// `alphabeta:D` or `alphabeta:TIME`.
    AlphaBeta(AlphaBetaLimit),
    /// `run:DIR` or `ckpt:PATH`: MCTS guided by a network.
    Net {
        /// The checkpoint or run.
        source: NetSource,
        /// Simulations per move.
        simulations: u32,
        /// PUCT or Gumbel; `None`: the run's (its `config.toml`), else Gumbel. The other
        /// constants of the search are always the run's.
        algorithm: Option<Algorithm>,
        /// The MCTS-Solver on or off (`@solver=`); `None`: the run's setting.
        solver: Option<bool>,
        /// Exact root proofs this many plies deep (`@prove=`); `None`: the run's setting.
        prove: Option<u32>,
        /// Exact check of the chosen move this many plies deep (`@verify=`); `None`: the
        /// run's setting.
        verify: Option<u32>,
    },
    /// `agent:FILE` or `FILE.agent`: an exported agent file and the search stored in it.
    File {
        /// The agent file.
        path: PathBuf,
        /// Simulations per move; `None`: the file's.
        simulations: Option<u32>,
        /// Thinking time per move instead of simulations (`@time=`).
        time: Option<Duration>,
        /// Whether the search keeps the subtree of the moves played (`@reuse=no`: not).
        reuse: bool,
        /// The MCTS-Solver on or off (`@solver=`); `None`: the file's setting.
        solver: Option<bool>,
        /// Exact root proofs this many plies deep (`@prove=`); `None`: the file's setting.
        prove: Option<u32>,
        /// Exact check of the chosen move this many plies deep (`@verify=`); `None`: the
        /// file's setting.
        verify: Option<u32>,
    },
}

/// An agent spec that does not parse: the spec and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("agent spec {spec:?}: {problem}")]
pub struct SpecError {
    /// The spec as given.
    pub spec: String,
    /// What is wrong.
    pub problem: SpecProblem,
}

/// What is wrong with an agent spec.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SpecProblem {
    /// Nothing was given.
    #[error(
        "empty spec; expected e.g. random, greedy, mcts:1000, alphabeta:3, run:DIR, ckpt:PATH, agent:FILE"
    )]
    Empty,
    /// The kind before the colon is unknown.
    #[error(
        "unknown agent {0:?}; expected random, greedy, mcts:N, alphabeta:DEPTH, alphabeta:TIME, run:DIR, ckpt:PATH or agent:FILE"
    )]
    UnknownKind(String),
    /// A kind that takes no argument was given one.
    #[error("{0} takes no argument after a colon")]
    UnexpectedArgument(&'static str),
    /// A kind that needs an argument was given none.
    #[error("{kind} needs {what} after a colon, e.g. {example}")]
    MissingArgument {
        /// The kind.
        kind: &'static str,
        /// What it needs.
        what: &'static str,
        /// An example spec.
        example: &'static str,
    },
    /// A value is out of range or malformed.
    #[error("{what} must be {expected}, got {value:?}")]
    BadValue {
        /// What the value is for.
        what: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        expected: &'static str,
    },
    /// An option the kind does not take.
    #[error("unknown option {option:?} for {kind}; {accepted}")]
    UnknownOption {
        /// The option's key.
        option: String,
        /// The kind.
        kind: &'static str,
        /// The options the kind takes.
        accepted: &'static str,
    },
    /// An option written twice.
    #[error("option {0:?} is given twice")]
    DuplicateOption(String),
    /// An option that is not `KEY=VALUE`.
    #[error("option {0:?} is not KEY=VALUE")]
    MalformedOption(String),
}

impl FromStr for AgentSpec {
    type Err = SpecError;

    fn from_str(spec: &str) -> Result<AgentSpec, SpecError> {
        parse(spec).map_err(|problem| SpecError {
            spec: spec.to_owned(),
            problem,
        })
    }
}

/// Options of one spec, checked against what its kind accepts.
struct Options<'a> {
    kind: &'static str,
    accepted: &'static str,
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Options<'a> {
    fn parse(
        kind: &'static str,
        accepted_keys: &[&str],
        accepted: &'static str,
        raw: &[&'a str],
    ) -> Result<Options<'a>, SpecProblem> {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for opt in raw {
            let (key, value) = opt
                .split_once('=')
                .filter(|(k, v)| !k.is_empty() && !v.is_empty())
                .ok_or_else(|| SpecProblem::MalformedOption((*opt).to_owned()))?;
            if !accepted_keys.contains(&key) {
                return Err(SpecProblem::UnknownOption {
                    option: key.to_owned(),
                    kind,
                    accepted,
                });
            }
            if pairs.iter().any(|(k, _)| *k == key) {
                return Err(SpecProblem::DuplicateOption(key.to_owned()));
            }
            pairs.push((key, value));
        }
        Ok(Options {
            kind,
            accepted,
            pairs,
        })
    }

    fn get(&self, key: &str) -> Option<&'a str> {
        self.pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn algo(&self) -> Result<Option<Algorithm>, SpecProblem> {
        self.get("algo")
            .map(|name| {
                name.parse().map_err(|_| SpecProblem::BadValue {
                    what: "algo",
                    value: name.to_owned(),
                    expected: "puct or gumbel",
                })
            })
            .transpose()
    }

    /// `yes` or `no` for `key`, if given.
    fn yes_no(&self, key: &'static str) -> Result<Option<bool>, SpecProblem> {
        match self.get(key) {
            None => Ok(None),
            Some("yes") => Ok(Some(true)),
            Some("no") => Ok(Some(false)),
            Some(other) => Err(SpecProblem::BadValue {
                what: key,
                value: other.to_owned(),
                expected: "yes or no",
            }),
        }
    }

    /// `@prove=PLIES` or `@verify=PLIES` (`key`), 0 to [`MAX_ROOT_PROOF_PLIES`].
    fn plies(&self, key: &'static str) -> Result<Option<u32>, SpecProblem> {
        self.get(key)
            .map(|v| {
                v.parse::<u32>()
                    .ok()
                    .filter(|p| v.bytes().all(|b| b.is_ascii_digit()) && *p <= MAX_ROOT_PROOF_PLIES)
                    .ok_or_else(|| SpecProblem::BadValue {
                        what: key,
                        value: v.to_owned(),
                        expected: "a whole number of plies from 0 to 15",
                    })
            })
            .transpose()
    }

    fn number(&self, key: &'static str, default: u32, max: u32) -> Result<u32, SpecProblem> {
        self.get(key)
            .map_or(Ok(default), |v| parse_count(key, v, max))
    }

    /// No options at all.
    fn none(self) -> Result<(), SpecProblem> {
        match self.pairs.first() {
            None => Ok(()),
            Some((key, _)) => Err(SpecProblem::UnknownOption {
                option: (*key).to_owned(),
                kind: self.kind,
                accepted: self.accepted,
            }),
        }
    }
}

const NO_OPTIONS: &str = "it takes no options";

/// Splits a spec into its kind, its argument and its options, and parses it by kind.
fn parse(spec: &str) -> Result<AgentSpec, SpecProblem> {
    if spec.trim().is_empty() {
        return Err(SpecProblem::Empty);
    }
    let mut parts = spec.split('@');
    let base = parts.next().unwrap_or_default();
    let raw_options: Vec<&str> = parts.collect();
    let (kind, arg) = match base.split_once(':') {
        Some((k, a)) => (k, Some(a)),
        None => (base, None),
    };
    match kind {
        "random" => no_search("random", AgentSpec::Random, arg, &raw_options),
        "greedy" => no_search("greedy", AgentSpec::Greedy, arg, &raw_options),
        "mcts" => mcts(arg, &raw_options),
        "alphabeta" => alphabeta(arg, &raw_options),
        "run" => net("run", arg, &raw_options),
        "ckpt" => net("ckpt", arg, &raw_options),
        "agent" => {
            let arg = required(
                arg,
                "agent",
                "an agent file",
                "agent:models/brandubh-v1.agent",
            )?;
            agent_file(arg, &raw_options)
        }
        _ if base.ends_with(".agent") => agent_file(base, &raw_options),
        other => Err(SpecProblem::UnknownKind(other.to_owned())),
    }
}

/// `random` or `greedy`: no argument, no options.
fn no_search(
    kind: &'static str,
    spec: AgentSpec,
    arg: Option<&str>,
    raw_options: &[&str],
) -> Result<AgentSpec, SpecProblem> {
    if arg.is_some() {
        return Err(SpecProblem::UnexpectedArgument(kind));
    }
    Options::parse(kind, &[], NO_OPTIONS, raw_options)?.none()?;
    Ok(spec)
}

/// `mcts:SIMS[@algo=…][@rollout=PLIES]`.
fn mcts(arg: Option<&str>, raw_options: &[&str]) -> Result<AgentSpec, SpecProblem> {
    const MCTS: &str = "it accepts @algo=puct|gumbel and @rollout=PLIES";
    let arg = required(arg, "mcts", "the number of simulations", "mcts:1000")?;
    let simulations = parse_count("simulations", arg, MAX_SIMULATIONS)?;
    let opts = Options::parse("mcts", &["algo", "rollout"], MCTS, raw_options)?;
    Ok(AgentSpec::Mcts {
        simulations,
        algorithm: opts.algo()?.unwrap_or(Algorithm::Puct),
        rollout_plies: opts.number("rollout", DEFAULT_ROLLOUT_PLIES, 10_000)?,
    })
}

/// `alphabeta:DEPTH` or `alphabeta:TIME`, no options.
fn alphabeta(arg: Option<&str>, raw_options: &[&str]) -> Result<AgentSpec, SpecProblem> {
    let arg = required(
        arg,
        "alphabeta",
        "a depth or a time",
        "alphabeta:3 or alphabeta:1s",
    )?;
    Options::parse("alphabeta", &[], NO_OPTIONS, raw_options)?.none()?;
    let limit = if arg.bytes().all(|b| b.is_ascii_digit()) {
        AlphaBetaLimit::Depth(parse_count("depth", arg, 64)?)
    } else {
        AlphaBetaLimit::Time(parse_time(arg)?)
    };
    Ok(AgentSpec::AlphaBeta(limit))
}

/// `run:DIR` or `ckpt:PATH` (`kind`), with `@sims=N` and `@algo=…`.
fn net(
    kind: &'static str,
    arg: Option<&str>,
    raw_options: &[&str],
) -> Result<AgentSpec, SpecProblem> {
    const NET: &str =
        "it accepts @sims=N, @algo=gumbel|puct, @solver=yes|no, @prove=PLIES and @verify=PLIES";
    let (what, example) = if kind == "run" {
        ("a run directory", "run:runs/quick")
    } else {
        (
            "a checkpoint path",
            "ckpt:runs/quick/checkpoints/iter-000012",
        )
    };
    let arg = required(arg, kind, what, example)?;
    let opts = Options::parse(
        kind,
        &["sims", "algo", "solver", "prove", "verify"],
        NET,
        raw_options,
    )?;
    let path = PathBuf::from(arg);
    Ok(AgentSpec::Net {
        source: if kind == "run" {
            NetSource::Run(path)
        } else {
            NetSource::Checkpoint(path)
        },
        simulations: opts.number("sims", DEFAULT_NET_SIMULATIONS, MAX_SIMULATIONS)?,
        algorithm: opts.algo()?,
        solver: opts.yes_no("solver")?,
        prove: opts.plies("prove")?,
        verify: opts.plies("verify")?,
    })
}

/// `agent:FILE` or `FILE.agent`, with its options.
fn agent_file(path: &str, raw_options: &[&str]) -> Result<AgentSpec, SpecProblem> {
    let opts = Options::parse(
        "agent",
        &["sims", "time", "reuse", "solver", "prove", "verify"],
        "it accepts @sims=N or @time=TIME, @reuse=yes|no, @solver=yes|no, @prove=PLIES and @verify=PLIES",
        raw_options,
    )?;
    let simulations = opts
        .get("sims")
        .map(|v| parse_count("sims", v, MAX_SIMULATIONS))
        .transpose()?;
    let time = opts.get("time").map(parse_time).transpose()?;
    if simulations.is_some() && time.is_some() {
        return Err(SpecProblem::BadValue {
            what: "time",
            value: opts.get("time").unwrap_or_default().to_owned(),
            expected: "given without @sims (a budget is simulations or time, not both)",
        });
    }
    Ok(AgentSpec::File {
        path: PathBuf::from(path),
        simulations,
        time,
        reuse: opts.yes_no("reuse")?.unwrap_or(true),
        solver: opts.yes_no("solver")?,
        prove: opts.plies("prove")?,
        verify: opts.plies("verify")?,
    })
}

fn required<'a>(
    arg: Option<&'a str>,
    kind: &'static str,
    what: &'static str,
    example: &'static str,
) -> Result<&'a str, SpecProblem> {
    arg.filter(|a| !a.is_empty())
        .ok_or(SpecProblem::MissingArgument {
            kind,
            what,
            example,
        })
}

/// A whole number in `1..=max`.
fn parse_count(what: &'static str, value: &str, max: u32) -> Result<u32, SpecProblem> {
    let expected = match max {
        64 => "a whole number from 1 to 64",
        10_000 => "a whole number from 1 to 10000",
        _ => "a whole number from 1 to 1000000",
    };
    let bad = || SpecProblem::BadValue {
        what,
        value: value.to_owned(),
        expected,
    };
    if !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    match value.parse::<u32>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(bad()),
    }
}

/// `500ms`, `1s`, `2.5s`: 1 ms to 1 h.
fn parse_time(value: &str) -> Result<Duration, SpecProblem> {
    let bad = || SpecProblem::BadValue {
        what: "time per move",
        value: value.to_owned(),
        expected: "a depth (1 to 64) or a time such as 500ms or 1.5s, from 1ms to 3600s",
    };
    let millis = if let Some(ms) = value.strip_suffix("ms") {
        if ms.is_empty() || !ms.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        ms.parse::<f64>().map_err(|_| bad())?
    } else if let Some(s) = value.strip_suffix('s') {
        let digits = s.bytes().filter(u8::is_ascii_digit).count();
        if digits == 0 || !s.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return Err(bad());
        }
        s.parse::<f64>().map_err(|_| bad())? * 1000.0
    } else {
        return Err(bad());
    };
    if !(1.0..=3_600_000.0).contains(&millis) {
        return Err(bad());
    }
    Ok(Duration::from_micros((millis * 1000.0).round() as u64))
}

impl AgentSpec {
    /// Sets in `settings` (a run's search) what a network spec's options say: `@sims`, and
    /// `@algo`, `@solver`, `@prove` and `@verify` where given. Other specs set nothing.
    pub fn set_net_options(&self, settings: &mut SearchSettings) {
        let AgentSpec::Net {
            simulations,
            algorithm,
            solver,
            prove,
            verify,
            ..
        } = self
        else {
            return;
        };
        settings.simulations = *simulations;
        if let Some(algorithm) = algorithm {
            settings.algorithm = *algorithm;
        }
        if let Some(solver) = solver {
            settings.solver = Some(*solver);
        }
        if let Some(plies) = prove {
            settings.root_proof_plies = *plies;
        }
        if let Some(plies) = verify {
            settings.verify_plies = *plies;
        }
    }
}

impl fmt::Display for AgentSpec {
    /// The canonical form: options in a fixed order, defaults left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentSpec::Random => f.write_str("random"),
            AgentSpec::Greedy => f.write_str("greedy"),
            AgentSpec::Mcts {
                simulations,
                algorithm,
                rollout_plies,
            } => {
                write!(f, "mcts:{simulations}")?;
                if *algorithm != Algorithm::Puct {
                    write!(f, "@algo={algorithm}")?;
                }
                if *rollout_plies != DEFAULT_ROLLOUT_PLIES {
                    write!(f, "@rollout={rollout_plies}")?;
                }
                Ok(())
            }
            AgentSpec::AlphaBeta(AlphaBetaLimit::Depth(d)) => write!(f, "alphabeta:{d}"),
            AgentSpec::AlphaBeta(AlphaBetaLimit::Time(t)) => {
                write!(f, "alphabeta:{}", time_text(*t))
            }
            AgentSpec::Net {
                source,
                simulations,
                algorithm,
                solver,
                prove,
                verify,
            } => {
                match source {
                    NetSource::Run(p) => write!(f, "run:{}", p.display())?,
                    NetSource::Checkpoint(p) => write!(f, "ckpt:{}", p.display())?,
                }
                write_net_options(f, *simulations, *algorithm)?;
                write_solver(f, *solver)?;
                write_plies(f, "prove", *prove)?;
                write_plies(f, "verify", *verify)
            }
            AgentSpec::File {
                path,
                simulations,
                time,
                reuse,
                solver,
                prove,
                verify,
            } => {
                write!(f, "agent:{}", path.display())?;
                if let Some(n) = simulations {
                    write!(f, "@sims={n}")?;
                }
                if let Some(t) = time {
                    write!(f, "@time={}", time_text(*t))?;
                }
                if !reuse {
                    f.write_str("@reuse=no")?;
                }
                write_solver(f, *solver)?;
                write_plies(f, "prove", *prove)?;
                write_plies(f, "verify", *verify)
            }
        }
    }
}

/// `1s`, `500ms` or `2.5s`: a time as the specs write it.
fn time_text(t: Duration) -> String {
    let us = t.as_micros();
    if us.is_multiple_of(1_000_000) {
        format!("{}s", us / 1_000_000)
    } else if us.is_multiple_of(1000) {
        format!("{}ms", us / 1000)
    } else {
        format!("{}s", t.as_secs_f64())
    }
}

/// `@sims=N@algo=A`, each only when not the default.
pub(crate) fn write_net_options(
    f: &mut impl fmt::Write,
    simulations: u32,
    algorithm: Option<Algorithm>,
) -> fmt::Result {
    if simulations != DEFAULT_NET_SIMULATIONS {
        write!(f, "@sims={simulations}")?;
    }
    if let Some(algorithm) = algorithm {
        write!(f, "@algo={algorithm}")?;
    }
    Ok(())
}

/// `@solver=yes` or `@solver=no` when given.
fn write_solver(f: &mut impl fmt::Write, solver: Option<bool>) -> fmt::Result {
    match solver {
        Some(true) => f.write_str("@solver=yes"),
        Some(false) => f.write_str("@solver=no"),
        None => Ok(()),
    }
}

/// `@prove=PLIES` or `@verify=PLIES` (`key`) when given.
fn write_plies(f: &mut impl fmt::Write, key: &str, plies: Option<u32>) -> fmt::Result {
    match plies {
        Some(p) => write!(f, "@{key}={p}"),
        None => Ok(()),
    }
}

/// Parses a comma-separated list of specs (`random,greedy,alphabeta:2`); empty items are
/// skipped.
pub fn parse_list(list: &str) -> Result<Vec<AgentSpec>, SpecError> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> AgentSpec {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> String {
        s.parse::<AgentSpec>().unwrap_err().to_string()
    }

    #[test]
    fn good_specs_parse() {
        assert_eq!(ok("random"), AgentSpec::Random);
        assert_eq!(ok("greedy"), AgentSpec::Greedy);
        assert_eq!(
            ok("mcts:1000"),
            AgentSpec::Mcts {
                simulations: 1000,
                algorithm: Algorithm::Puct,
                rollout_plies: DEFAULT_ROLLOUT_PLIES
            }
        );
        assert_eq!(
            ok("mcts:50@rollout=30@algo=gumbel"),
            AgentSpec::Mcts {
                simulations: 50,
                algorithm: Algorithm::Gumbel,
                rollout_plies: 30
            }
        );
        assert_eq!(
            ok("alphabeta:3"),
            AgentSpec::AlphaBeta(AlphaBetaLimit::Depth(3))
        );
        let time = |ms| AgentSpec::AlphaBeta(AlphaBetaLimit::Time(Duration::from_millis(ms)));
        assert_eq!(ok("alphabeta:1s"), time(1000));
        assert_eq!(ok("alphabeta:500ms"), time(500));
        assert_eq!(ok("alphabeta:0.25s"), time(250));
        assert_eq!(
            ok("run:runs/x"),
            AgentSpec::Net {
                source: NetSource::Run("runs/x".into()),
                simulations: DEFAULT_NET_SIMULATIONS,
                algorithm: None,
                solver: None,
                prove: None,
                verify: None,
            }
        );
        assert_eq!(
            ok("ckpt:runs/x/checkpoints/iter-000012@sims=200@algo=puct"),
            AgentSpec::Net {
                source: NetSource::Checkpoint("runs/x/checkpoints/iter-000012".into()),
                simulations: 200,
                algorithm: Some(Algorithm::Puct),
                solver: None,
                prove: None,
                verify: None,
            }
        );
    }

    #[test]
    fn display_is_canonical_and_round_trips() {
        for (given, canonical) in [
            ("random", "random"),
            ("mcts:1000@algo=puct", "mcts:1000"),
            (
                "mcts:8@rollout=20@algo=gumbel",
                "mcts:8@algo=gumbel@rollout=20",
            ),
            ("alphabeta:2", "alphabeta:2"),
            ("alphabeta:1000ms", "alphabeta:1s"),
            ("alphabeta:1.5s", "alphabeta:1500ms"),
            ("run:runs/x@sims=64", "run:runs/x"),
            // Without @algo a network agent plays its run's algorithm, so an explicit one
            // stays in the canonical form.
            ("run:runs/x@sims=64@algo=gumbel", "run:runs/x@algo=gumbel"),
            ("ckpt:a/b@algo=puct@sims=8", "ckpt:a/b@sims=8@algo=puct"),
            ("run:r@solver=no@algo=puct", "run:r@algo=puct@solver=no"),
            ("models/v1.agent", "agent:models/v1.agent"),
            ("agent:m/x.agent@sims=400", "agent:m/x.agent@sims=400"),
            (
                "m/x.agent@reuse=no@time=0.05s",
                "agent:m/x.agent@time=50ms@reuse=no",
            ),
            (
                "agent:m/x.agent@time=2s@reuse=yes",
                "agent:m/x.agent@time=2s",
            ),
            (
                "m/x.agent@solver=no@sims=8",
                "agent:m/x.agent@sims=8@solver=no",
            ),
            ("m/x.agent@solver=yes", "agent:m/x.agent@solver=yes"),
            ("m/x.agent@prove=7@sims=8", "agent:m/x.agent@sims=8@prove=7"),
            ("run:r@prove=0@solver=yes", "run:r@solver=yes@prove=0"),
        ] {
            let spec = ok(given);
            assert_eq!(spec.to_string(), canonical);
            assert_eq!(ok(canonical), spec);
        }
    }

    #[test]
    #[expect(
        clippy::too_many_lines,
        reason = "a test: one table of cases or one scenario, read top to bottom"
    )]
    fn bad_specs_give_one_line_errors_naming_the_spec() {
        let cases = [
            (
                "",
                "agent spec \"\": empty spec; expected e.g. random, greedy, mcts:1000, alphabeta:3, run:DIR, ckpt:PATH, agent:FILE",
            ),
            (
                "randm",
                "agent spec \"randm\": unknown agent \"randm\"; expected random, greedy, mcts:N, alphabeta:DEPTH, alphabeta:TIME, run:DIR, ckpt:PATH or agent:FILE",
            ),
            (
                "random:3",
                "agent spec \"random:3\": random takes no argument after a colon",
            ),
            (
                "greedy@sims=3",
                "agent spec \"greedy@sims=3\": unknown option \"sims\" for greedy; it takes no options",
            ),
            (
                "mcts",
                "agent spec \"mcts\": mcts needs the number of simulations after a colon, e.g. mcts:1000",
            ),
            (
                "mcts:",
                "agent spec \"mcts:\": mcts needs the number of simulations after a colon, e.g. mcts:1000",
            ),
            (
                "mcts:0",
                "agent spec \"mcts:0\": simulations must be a whole number from 1 to 1000000, got \"0\"",
            ),
            (
                "mcts:1e3",
                "agent spec \"mcts:1e3\": simulations must be a whole number from 1 to 1000000, got \"1e3\"",
            ),
            (
                "mcts:10@algo=alpha",
                "agent spec \"mcts:10@algo=alpha\": algo must be puct or gumbel, got \"alpha\"",
            ),
            (
                "mcts:10@sims=3",
                "agent spec \"mcts:10@sims=3\": unknown option \"sims\" for mcts; it accepts @algo=puct|gumbel and @rollout=PLIES",
            ),
            (
                "alphabeta:65",
                "agent spec \"alphabeta:65\": depth must be a whole number from 1 to 64, got \"65\"",
            ),
            (
                "alphabeta:0",
                "agent spec \"alphabeta:0\": depth must be a whole number from 1 to 64, got \"0\"",
            ),
            (
                "alphabeta:fast",
                "agent spec \"alphabeta:fast\": time per move must be a depth (1 to 64) or a time such as 500ms or 1.5s, from 1ms to 3600s, got \"fast\"",
            ),
            (
                "alphabeta:0ms",
                "agent spec \"alphabeta:0ms\": time per move must be a depth (1 to 64) or a time such as 500ms or 1.5s, from 1ms to 3600s, got \"0ms\"",
            ),
            (
                "run:",
                "agent spec \"run:\": run needs a run directory after a colon, e.g. run:runs/quick",
            ),
            (
                "run:x@sims",
                "agent spec \"run:x@sims\": option \"sims\" is not KEY=VALUE",
            ),
            (
                "run:x@sims=4@sims=5",
                "agent spec \"run:x@sims=4@sims=5\": option \"sims\" is given twice",
            ),
            (
                "ckpt:x@sims=-1",
                "agent spec \"ckpt:x@sims=-1\": sims must be a whole number from 1 to 1000000, got \"-1\"",
            ),
            (
                "ckpt:x@temp=1",
                "agent spec \"ckpt:x@temp=1\": unknown option \"temp\" for ckpt; it accepts @sims=N, @algo=gumbel|puct, @solver=yes|no, @prove=PLIES and @verify=PLIES",
            ),
            (
                "agent:",
                "agent spec \"agent:\": agent needs an agent file after a colon, e.g. agent:models/brandubh-v1.agent",
            ),
            (
                "models/best.agent@algo=puct",
                "agent spec \"models/best.agent@algo=puct\": unknown option \"algo\" for agent; it accepts @sims=N or @time=TIME, @reuse=yes|no, @solver=yes|no, @prove=PLIES and @verify=PLIES",
            ),
            (
                "m/x.agent@sims=8@time=1s",
                "agent spec \"m/x.agent@sims=8@time=1s\": time must be given without @sims (a budget is simulations or time, not both), got \"1s\"",
            ),
            (
                "m/x.agent@reuse=maybe",
                "agent spec \"m/x.agent@reuse=maybe\": reuse must be yes or no, got \"maybe\"",
            ),
            (
                "m/x.agent@solver=off",
                "agent spec \"m/x.agent@solver=off\": solver must be yes or no, got \"off\"",
            ),
            (
                "m/x.agent@prove=16",
                "agent spec \"m/x.agent@prove=16\": prove must be a whole number of plies from 0 to 15, got \"16\"",
            ),
            (
                "run:r@prove=-1",
                "agent spec \"run:r@prove=-1\": prove must be a whole number of plies from 0 to 15, got \"-1\"",
            ),
        ];
        for (spec, message) in cases {
            let e = err(spec);
            assert_eq!(e, message);
            assert!(!e.contains('\n'));
        }
        // Control characters are escaped, so the message stays on one line.
        assert!(!err("rand\nom").contains('\n'));
    }

    #[test]
    fn lists_parse() {
        assert_eq!(
            parse_list("random, greedy,,alphabeta:2").unwrap(),
            vec![
                AgentSpec::Random,
                AgentSpec::Greedy,
                AgentSpec::AlphaBeta(AlphaBetaLimit::Depth(2))
            ]
        );
        assert!(parse_list("random,bogus").is_err());
    }
}

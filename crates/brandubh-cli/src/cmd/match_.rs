//! `brandubh match A B [--matches N] [--sprt ELO0,ELO1[,ALPHA,BETA]] [--threads T] [--seed S]
//! [--ply-cap P] [--json]`.

use std::io::Write;
use std::process::ExitCode;

use brandubh_eval::{
    Entrant, MatchConfig, PlayerFactory, Progress, Sprt, SprtConfig, run_matches, run_sprt,
};

use crate::out;

/// Matches played without --sprt when --matches is not given.
const DEFAULT_MATCHES: u32 = 20;

/// Play two-game matches (sides swapped, RULES.md "Matches") between agents A and B.
///
/// Agents: random, greedy, mcts:N (rollout MCTS, N simulations), alphabeta:DEPTH,
/// alphabeta:TIME (e.g. 500ms, 1s), run:DIR (latest checkpoint of a run), ckpt:PATH (one
/// checkpoint); network agents take @sims=N, @algo=gumbel|puct, @solver=yes|no,
/// @prove=PLIES (exact proofs of the root moves) and @verify=PLIES (exact check of the move
/// to play), e.g. run:runs/quick@sims=128; agent:FILE or FILE.agent (an exported agent with
/// its own search settings, which @sims=N or @time=TIME (a deadline per move, e.g. 50ms),
/// @reuse=yes|no (keep the subtree between moves), @solver, @prove and @verify override).
/// Each match starts from its own balanced
/// opening drawn from the seed (printed on stderr). Prints the match record, game wins by
/// colour, mean game length and the Elo difference A - B with a 95% interval.
///
/// With --sprt, matches go on until a sequential probability ratio test decides between
/// H0 (A is ELO0 above B on the match score) and H1 (ELO1 above), with false-positive rate
/// ALPHA and false-negative rate BETA (both 0.05 by default), or --matches is reached
/// (docs/guide/sprt.md).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Agent A (White in the first game of each match).
    a: String,
    /// Agent B.
    b: String,
    /// Number of two-game matches (1-1000000; default 20). With --sprt, the most the test
    /// plays before it stops inconclusive (default 1000).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    matches: Option<u32>,
    /// Play until a sequential probability ratio test decides: ELO0,ELO1[,ALPHA,BETA], e.g.
    /// 0,30 (H0: A is 0 Elo above B on the match score; H1: 30 above; alpha = beta = 0.05).
    #[arg(
        long,
        value_name = "ELO0,ELO1[,ALPHA,BETA]",
        allow_hyphen_values = true
    )]
    sprt: Option<String>,
    /// Worker threads; 0 uses every core.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=1024))]
    threads: u16,
    /// Seed of the openings and players (default: a fresh one, printed on stderr).
    #[arg(long)]
    seed: Option<u64>,
    /// A game still running after this many plies stops unfinished (1-10000).
    #[arg(long, default_value_t = brandubh_eval::runner::DEFAULT_PLY_CAP,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    ply_cap: u32,
    /// Print the whole report, every match included, as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let a = Entrant::from_spec(&args.a)?;
    let b = Entrant::from_spec(&args.b)?;
    for agent in [&a, &b] {
        if let Some(c) = agent.checkpoint() {
            eprintln!(
                "{}: checkpoint {} (step {})",
                agent.name(),
                c.stem.display(),
                c.meta.step
            );
        }
    }
    let sprt = args
        .sprt
        .as_deref()
        .map(|text| {
            let max = args.matches.unwrap_or(SprtConfig::default().max_matches);
            brandubh_eval::sprt::parse_sprt(text, max).and_then(Sprt::new)
        })
        .transpose()?;
    let seed = args.seed.unwrap_or_else(brandubh_eval::fresh_seed);
    eprintln!("seed {seed} (repeat with --seed {seed})");
    let config = MatchConfig {
        matches: args.matches.unwrap_or(DEFAULT_MATCHES),
        threads: usize::from(args.threads),
        seed,
        ply_cap: args.ply_cap,
        ..MatchConfig::default()
    };
    let total = sprt.map_or(config.matches, |t| t.config.max_matches);
    let bar = out::matches_bar(u64::from(total))?;
    bar.set_message(format!("A {} vs B {}", args.a, args.b));
    let show = |p: &Progress| {
        bar.set_position(u64::from(p.done));
        let r = p.record;
        let llr = match (p.llr, &sprt) {
            (Some(llr), Some(t)) => format!("  LLR {llr:.2} ({:.2} to {:.2})", t.lower, t.upper),
            _ => String::new(),
        };
        bar.set_message(format!(
            "A: {} W / {} D / {} L{llr}",
            r.wins, r.draws, r.losses
        ));
    };
    let report = match &sprt {
        Some(t) => run_sprt(&a, &b, &config, t, &show),
        None => run_matches(&a, &b, &config, &show),
    };
    bar.finish_and_clear();
    out::print(args.json, &report?, |w, report| {
        writeln!(w, "{report}")?;
        writeln!(
            w,
            "time     {:.2} s ({:.1} matches/s) on {}",
            report.seconds,
            f64::from(report.matches) / report.seconds.max(1e-9),
            report.cpu
        )?;
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

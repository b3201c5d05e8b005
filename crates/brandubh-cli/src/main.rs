//! `brandubh`: the command-line front end of Brandubh Zero.
//!
//! Thin by design: arguments are parsed by clap, validated into library types, and handed to
//! the library crates. Every error is one line on stderr with a non-zero exit status.

mod backend;
mod cmd;
mod out;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Brandubh Zero: rules engine, self-play trainer and agents for the 7x7 tafl game Brandubh.
#[derive(Debug, Parser)]
#[command(name = "brandubh", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Perft(cmd::perft::Args),
    Replay(cmd::replay::Args),
    Train(cmd::train::Args),
    Bench(cmd::bench::Args),
    Match(cmd::match_::Args),
    Ladder(cmd::ladder::Args),
    Report(cmd::report::Args),
    Export(cmd::export::Args),
    Play(cmd::play::Args),
    Analyze(cmd::analyze::Args),
    Engine(cmd::engine::Args),
    Serve(cmd::serve::Args),
    Status(cmd::status::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let result = match cli.command {
        Command::Perft(args) => cmd::perft::run(args),
        Command::Replay(args) => cmd::replay::run(args),
        Command::Train(args) => train(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Match(args) => cmd::match_::run(args),
        Command::Ladder(args) => cmd::ladder::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Play(args) => cmd::play::run(args),
        Command::Analyze(args) => cmd::analyze::run(args),
        Command::Engine(args) => cmd::engine::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Status(args) => cmd::status::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) if out::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // The contexts the binary adds, then the library error, which shows its own causes
            // in its message: each once.
            eprintln!("error: {}", brandubh_fs::error_line(err.as_ref()));
            ExitCode::FAILURE
        }
    }
}

/// `brandubh train`: the whole run in one process (`cmd::train`), or a learner or an actor
/// of a run on a store (`cmd::remote`, which uses `cmd::train`'s arguments and progress bars).
fn train(args: cmd::train::Args) -> anyhow::Result<ExitCode> {
    use cmd::train::Role;
    let (role, config) = args.role_and_config()?;
    match role {
        Role::All => cmd::train::run_all(&args, config),
        Role::Learner => cmd::remote::learner(&args, config.as_ref()),
        Role::Actor => cmd::remote::actor(&args, config.as_ref()),
    }
}

/// Log lines (tracing) go to stderr; `RUST_LOG` overrides the default level `info`.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .with_target(false)
        .try_init();
}

//! Shared by the examples that compare two thinkers of one agent file side by side.
#![allow(dead_code, reason = "each example uses a part of these helpers")]

use std::error::Error;
use std::time::Duration;

use brandubh_agent::{Agent, Analysis, Budget, Thinker};
use brandubh_rules::Game;

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The command line: agent file, milliseconds per move, games (defaults
/// `models/brandubh-v1.agent`, 50, 10), and what follows.
pub struct Setup {
    pub path: String,
    pub ms: u64,
    pub games: u64,
    pub agent: Agent,
    pub budget: Budget,
    /// The arguments after the first three.
    pub rest: Vec<String>,
}

impl Setup {
    pub fn from_args() -> Result<Setup> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let path = args
            .first()
            .map_or("models/brandubh-v1.agent", String::as_str)
            .to_owned();
        let ms: u64 = args.get(1).map_or(Ok(50), |s| s.parse())?;
        let games: u64 = args.get(2).map_or(Ok(10), |s| s.parse())?;
        let agent = Agent::load(&path)?;
        Ok(Setup {
            path,
            ms,
            games,
            agent,
            budget: Budget::Time(Duration::from_millis(ms)),
            rest: args.iter().skip(3).cloned().collect(),
        })
    }

    /// Plays `self.games` self-play games of the agent (at most 300 plies each), searching
    /// every move with two thinkers seeded by the game's number, for the same budget: the
    /// second set up by `second`; the game follows the first. Which one searches first
    /// alternates, so that neither always gets the warmer caches or the quieter moment.
    /// `each_move` sees both analyses, `each_game` each finished game.
    pub fn side_by_side(
        &self,
        second: impl Fn(&mut Thinker),
        mut each_move: impl FnMut(&Analysis, &Analysis),
        mut each_game: impl FnMut(u64, &Game),
    ) -> Result<()> {
        let budget = self.budget;
        for g in 0..self.games {
            let mut one = self.agent.thinker(g)?;
            let mut two = self.agent.thinker(g)?;
            second(&mut two);
            let mut game = Game::default();
            while !game.is_over() && game.ply() < 300 {
                let (a, b) = if game.ply() % 2 == 0 {
                    let a = one.think(&game, budget)?;
                    (a, two.think(&game, budget)?)
                } else {
                    let b = two.think(&game, budget)?;
                    (one.think(&game, budget)?, b)
                };
                each_move(&a, &b);
                game.play(a.best_move)?;
            }
            each_game(g, &game);
        }
        Ok(())
    }

    /// The first line of the report: what was played.
    pub fn headline(&self, moves: impl std::fmt::Display) -> String {
        format!(
            "{}, {} ms per move, {} games, {moves} moves",
            self.path, self.ms, self.games
        )
    }
}

/// The median of `v` (sorted in place); 0 when empty.
pub fn median(v: &mut [u32]) -> u32 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

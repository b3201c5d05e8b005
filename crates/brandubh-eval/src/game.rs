//! One game of a match: its seeded players ([`player_seed`]), playing it from its opening
//! ([`play_match_game`]) and its record ([`PlayedGame`]). The match runner and the
//! batched tables both play games this way; this module depends on the agents and the
//! scoring only, so that the dependencies between the modules point one way (agent ←
//! game ← table ← runner).

use brandubh_rules::{Game, Side};
use brandubh_search::Player;

use crate::agent::PlayerFactory;
use crate::error::EvalError;
use crate::openings::Opening;
use crate::scoring::{Contestant, MatchGame};
use crate::seeds::mix;

/// One finished game: its record and its moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayedGame {
    /// Who won, why, after how many plies.
    pub record: MatchGame,
    /// The moves from the start position, opening included, space-separated.
    pub moves: String,
}

impl PlayedGame {
    /// The record of `game`, a game from `white_is`'s view, finished or stopped at the cap.
    pub(crate) fn of(game: &Game, white_is: Contestant) -> PlayedGame {
        let plies = game.ply() as u32;
        let record = match game.outcome() {
            Some(o) => {
                let winner = if o.winner == Side::White {
                    white_is
                } else {
                    white_is.other()
                };
                MatchGame::won(white_is, winner, o.reason, plies)
            }
            None => MatchGame::capped(white_is, plies),
        };
        let moves = game
            .moves()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        PlayedGame { record, moves }
    }
}

/// Plays one game from `opening` between `white` and `black`, stopping at `ply_cap`.
/// `white_is` says which contestant plays White. Returns the game record, or who failed at
/// which ply, with the error.
fn play_game(
    white: &mut dyn Player,
    black: &mut dyn Player,
    white_is: Contestant,
    opening: &Opening,
    ply_cap: u32,
) -> Result<PlayedGame, (Contestant, usize, String)> {
    let mut game = opening
        .game()
        .map_err(|e| (white_is, 0, format!("opening {opening}: {e}")))?;
    while !game.is_over() && game.ply() < ply_cap as usize {
        let (chosen, who) = match game.side_to_move() {
            Side::White => (white.choose(&game), white_is),
            Side::Black => (black.choose(&game), white_is.other()),
        };
        let mv = chosen.map_err(|e| (who, game.ply(), e.to_string()))?;
        game.play(mv)
            .map_err(|e| (who, game.ply(), format!("chose an illegal move: {e}")))?;
    }
    Ok(PlayedGame::of(&game, white_is))
}

/// The seed of `who`'s player in game `game` (0 or 1) of match `index`.
#[must_use]
pub fn player_seed(seed: u64, index: u32, game: u32, who: Contestant) -> u64 {
    mix(
        seed,
        &[u64::from(index), u64::from(game), who.index() as u64],
    )
}

/// Plays game `game` (0: A is White, 1: B is White) of match `index` from `opening`.
pub fn play_match_game(
    a: &dyn PlayerFactory,
    b: &dyn PlayerFactory,
    index: u32,
    game: u32,
    opening: &Opening,
    seed: u64,
    ply_cap: u32,
) -> Result<PlayedGame, EvalError> {
    let mut pa = a.player(player_seed(seed, index, game, Contestant::A), ply_cap)?;
    let mut pb = b.player(player_seed(seed, index, game, Contestant::B), ply_cap)?;
    let result = if game == 0 {
        play_game(&mut *pa, &mut *pb, Contestant::A, opening, ply_cap)
    } else {
        play_game(&mut *pb, &mut *pa, Contestant::B, opening, ply_cap)
    };
    result.map_err(|(who, ply, cause)| EvalError::Player {
        agent: match who {
            Contestant::A => a.name(),
            Contestant::B => b.name(),
        },
        index,
        game: game + 1,
        ply,
        cause,
    })
}

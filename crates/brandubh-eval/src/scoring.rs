//! Scoring a two-game match exactly as RULES.md, "Matches", says.
//!
//! A match is two games between contestants [`Contestant::A`] and [`Contestant::B`], who
//! swap sides after the first game:
//!
//! | game 1          | game 2          | match                                          |
//! |-----------------|-----------------|------------------------------------------------|
//! | X wins          | X wins          | X wins                                         |
//! | X wins in n     | Y wins in m     | fewer plies wins: X if n < m, Y if m < n, draw |
//! | X wins          | stopped (cap)   | X wins (the decided game decides)              |
//! | stopped (cap)   | stopped (cap)   | draw                                           |
//!
//! Plies are counted from the start of each game. Both games of a match start from the same
//! opening, so its plies count in both and never change the comparison.

use brandubh_rules::Reason;
use serde::{Deserialize, Serialize};

/// One of the two agents of a match: `A` plays White in the first game, `B` in the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Contestant {
    /// The first agent named (White in game 1).
    A,
    /// The second agent named (White in game 2).
    B,
}

impl Contestant {
    /// The other contestant.
    #[must_use]
    pub const fn other(self) -> Contestant {
        match self {
            Contestant::A => Contestant::B,
            Contestant::B => Contestant::A,
        }
    }

    /// 0 for `A`, 1 for `B`.
    #[must_use]
    pub const fn index(self) -> usize {
        match self {
            Contestant::A => 0,
            Contestant::B => 1,
        }
    }
}

/// How one game of a match ended, as far as scoring needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchGame {
    /// Who played White.
    pub white: Contestant,
    /// Who won; `None` when the ply cap stopped the game (it is unfinished, rule 9).
    pub winner: Option<Contestant>,
    /// Why the game ended (rule 8); `None` when stopped by the ply cap.
    pub reason: Option<Reason>,
    /// Plies played, counted from the start of the game (the opening included).
    pub plies: u32,
}

impl MatchGame {
    /// A game won by `winner` after `plies` plies, for `reason`.
    #[must_use]
    pub const fn won(white: Contestant, winner: Contestant, reason: Reason, plies: u32) -> Self {
        MatchGame {
            white,
            winner: Some(winner),
            reason: Some(reason),
            plies,
        }
    }

    /// A game stopped unfinished by the ply cap after `plies` plies.
    #[must_use]
    pub const fn capped(white: Contestant, plies: u32) -> Self {
        MatchGame {
            white,
            winner: None,
            reason: None,
            plies,
        }
    }

    /// Whether the ply cap stopped the game.
    #[must_use]
    pub const fn is_unfinished(&self) -> bool {
        self.winner.is_none()
    }

    /// Game points of `who`: 1 for a win, ½ for an unfinished game, 0 for a loss.
    #[must_use]
    pub fn points(&self, who: Contestant) -> f64 {
        match self.winner {
            Some(w) if w == who => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        }
    }
}

/// The result of a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchResult {
    /// `A` won the match.
    AWins,
    /// Drawn.
    Draw,
    /// `B` won the match.
    BWins,
}

impl MatchResult {
    /// The match won by `who`.
    #[must_use]
    pub const fn win_for(who: Contestant) -> MatchResult {
        match who {
            Contestant::A => MatchResult::AWins,
            Contestant::B => MatchResult::BWins,
        }
    }

    /// The winner, `None` for a draw.
    #[must_use]
    pub const fn winner(self) -> Option<Contestant> {
        match self {
            MatchResult::AWins => Some(Contestant::A),
            MatchResult::Draw => None,
            MatchResult::BWins => Some(Contestant::B),
        }
    }

    /// Match points of `who`: 1 for a won match, ½ for a draw, 0 for a loss.
    #[must_use]
    pub fn points(self, who: Contestant) -> f64 {
        match self.winner() {
            Some(w) if w == who => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        }
    }
}

/// Scores a match from its two games (RULES.md, "Matches"; see the module table).
#[must_use]
pub fn score_match(first: &MatchGame, second: &MatchGame) -> MatchResult {
    match (first.winner, second.winner) {
        (Some(x), Some(y)) if x == y => MatchResult::win_for(x),
        (Some(x), Some(y)) => match first.plies.cmp(&second.plies) {
            std::cmp::Ordering::Less => MatchResult::win_for(x),
            std::cmp::Ordering::Greater => MatchResult::win_for(y),
            std::cmp::Ordering::Equal => MatchResult::Draw,
        },
        (Some(x), None) | (None, Some(x)) => MatchResult::win_for(x),
        (None, None) => MatchResult::Draw,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Contestant::{A, B};

    const R: Reason = Reason::KingEscaped;

    fn won(white: Contestant, winner: Contestant, plies: u32) -> MatchGame {
        MatchGame::won(white, winner, R, plies)
    }

    /// Asserts the result of each match: (first game, second game, result).
    fn scores(matches: &[(MatchGame, MatchGame, MatchResult)]) {
        for (first, second, result) in matches {
            assert_eq!(score_match(first, second), *result, "{first:?}, {second:?}");
        }
    }

    #[test]
    fn both_games_won_by_one_player_win_the_match() {
        scores(&[
            (won(A, A, 30), won(B, A, 80), MatchResult::AWins),
            (won(A, B, 90), won(B, B, 12), MatchResult::BWins),
        ]);
    }

    #[test]
    fn one_win_each_goes_to_the_shorter_win() {
        scores(&[
            // A wins game 1 (as White) in 20 plies, B wins game 2 (as White) in 40.
            (won(A, A, 20), won(B, B, 40), MatchResult::AWins),
            // B wins game 1 (as Black) in 50 plies, A wins game 2 (as Black) in 31.
            (won(A, B, 50), won(B, A, 31), MatchResult::AWins),
            (won(A, A, 41), won(B, B, 40), MatchResult::BWins),
            (won(A, B, 7), won(B, A, 8), MatchResult::BWins),
        ]);
    }

    #[test]
    fn one_win_each_in_equal_plies_is_a_draw() {
        scores(&[
            (won(A, A, 33), won(B, B, 33), MatchResult::Draw),
            (won(A, B, 60), won(B, A, 60), MatchResult::Draw),
        ]);
    }

    #[test]
    fn a_won_game_beats_a_capped_one() {
        let cap = |white| MatchGame::capped(white, 200);
        assert_eq!(score_match(&won(A, A, 150), &cap(B)), MatchResult::AWins);
        assert_eq!(score_match(&won(A, B, 150), &cap(B)), MatchResult::BWins);
        assert_eq!(score_match(&cap(A), &won(B, A, 199)), MatchResult::AWins);
        assert_eq!(score_match(&cap(A), &won(B, B, 3)), MatchResult::BWins);
    }

    #[test]
    fn two_capped_games_are_a_draw() {
        assert_eq!(
            score_match(&MatchGame::capped(A, 200), &MatchGame::capped(B, 200)),
            MatchResult::Draw
        );
    }

    #[test]
    fn points_add_up() {
        for r in [MatchResult::AWins, MatchResult::Draw, MatchResult::BWins] {
            assert_eq!(r.points(A) + r.points(B), 1.0);
        }
        let g = MatchGame::capped(A, 10);
        assert_eq!(g.points(A), 0.5);
        assert_eq!(won(A, B, 9).points(B), 1.0);
    }

    #[test]
    fn results_serialize_in_snake_case() {
        let json = serde_json::to_string(&won(B, A, 12)).unwrap();
        assert_eq!(
            json,
            r#"{"white":"b","winner":"a","reason":"king_escaped","plies":12}"#
        );
        assert_eq!(
            serde_json::to_string(&MatchResult::BWins).unwrap(),
            r#""b_wins""#
        );
    }
}

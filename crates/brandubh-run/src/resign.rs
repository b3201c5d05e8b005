//! Resignation of clearly lost self-play games (`selfplay.resign_threshold`).
//!
//! A side resigns once the value of its full searches (the recorded root values, from its
//! own view) has been at or below −threshold for `consecutive` of its recorded moves in a
//! row. The rule reads nothing but what a game record holds, so the same [`ResignRule`]
//! decides during self-play ([`ResignWatch`], move by move) and afterwards, from the
//! records, whether a game that was played out to the end would have been resigned
//! ([`ResignRule::would_resign`]): that is how the games kept from resigning
//! (`selfplay.resign_check_fraction`) measure the false-resignation rate, locally and for
//! games an actor played alike.

use brandubh_rules::Side;

use crate::replay::{GameRecord, GameResult};

/// When a self-play game is resigned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResignRule {
    /// A value at or below −threshold counts (in (0, 1]).
    pub threshold: f32,
    /// Recorded moves in a row of the same side (at least 1).
    pub consecutive: u32,
}

/// A game's progress towards resignation under a [`ResignRule`].
#[derive(Clone, Copy, Debug)]
pub struct ResignWatch {
    rule: ResignRule,
    /// Recorded moves in a row below the threshold, White's and Black's.
    below: [u32; 2],
}

impl ResignWatch {
    /// Counts a recorded search of `side` that valued its position `value` (from `side`'s
    /// view); returns whether `side` resigns now.
    pub fn observe(&mut self, side: Side, value: f32) -> bool {
        let count = &mut self.below[side as usize];
        if value <= -self.rule.threshold {
            *count += 1;
        } else {
            *count = 0;
        }
        *count >= self.rule.consecutive
    }
}

/// How a game played out compares with the rule: for the false-resignation rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// The rule never fired in the game.
    NotTriggered,
    /// The rule would have resigned for this side, which went on to lose.
    Lost(Side),
    /// The rule would have resigned for this side, which then won or reached the ply cap
    /// (a false resignation).
    Saved(Side),
}

impl ResignRule {
    /// A watch for a new game.
    #[must_use]
    pub fn watch(self) -> ResignWatch {
        ResignWatch {
            rule: self,
            below: [0; 2],
        }
    }

    /// The side and ply at which this rule would resign `game`, replaying its recorded
    /// full searches in order; `None` if it never fires.
    #[must_use]
    pub fn would_resign(self, game: &GameRecord) -> Option<(Side, u32)> {
        let first = game.start.side_to_move();
        let mut watch = self.watch();
        game.positions
            .iter()
            .filter(|p| p.full_search)
            .find_map(|p| {
                let side = if p.ply.is_multiple_of(2) {
                    first
                } else {
                    first.opponent()
                };
                watch.observe(side, p.root_value).then_some((side, p.ply))
            })
    }

    /// What playing `game` out showed: whether the rule would have resigned it, and if so
    /// whether the resigning side lost. A resigned game shows nothing (it was not played
    /// out).
    #[must_use]
    pub fn check(self, game: &GameRecord) -> Check {
        if matches!(game.result, GameResult::Resigned { .. }) {
            return Check::NotTriggered;
        }
        match self.would_resign(game) {
            None => Check::NotTriggered,
            Some((side, _)) if game.result.winner() == Some(side.opponent()) => Check::Lost(side),
            Some((side, _)) => Check::Saved(side),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::PositionRecord;
    use brandubh_rules::{Game, Outcome, Position, Reason};

    /// A game of `values.len()` random moves whose move at ply `i` was a full search
    /// valued `values[i]` (`None`: a cheap, unrecorded search), ending in `result`.
    fn game(values: &[Option<f32>], result: GameResult) -> GameRecord {
        let mut g = Game::new(Position::start());
        let mut positions = Vec::new();
        for (ply, v) in values.iter().enumerate() {
            let legal = g.legal_moves();
            if let Some(v) = v {
                positions.push(PositionRecord {
                    ply: ply as u32,
                    policy: vec![(legal[0], 1.0)],
                    root_value: *v,
                    full_search: true,
                });
            }
            g.play(legal[ply % legal.len()]).unwrap();
            assert!(!g.is_over());
        }
        GameRecord {
            start: Position::start(),
            moves: g.moves().to_vec(),
            result,
            positions,
            sparring: false,
        }
    }

    const RULE: ResignRule = ResignRule {
        threshold: 0.9,
        consecutive: 2,
    };

    fn white_escapes() -> GameResult {
        GameResult::Finished(Outcome {
            winner: Side::White,
            reason: Reason::KingEscaped,
        })
    }

    fn black_captures() -> GameResult {
        GameResult::Finished(Outcome {
            winner: Side::Black,
            reason: Reason::KingCaptured,
        })
    }

    #[test]
    fn fires_after_consecutive_low_values_of_one_side() {
        // White moves first (RULES.md rule 1): even plies are White's. White's values at
        // plies 0, 2, 4, 6: -0.95, -0.5 (resets), -0.92, -0.99 → fires at ply 6.
        let values = [
            Some(-0.95),
            Some(-0.99),
            Some(-0.5),
            Some(0.3),
            Some(-0.92),
            Some(0.95),
            Some(-0.99),
            Some(0.99),
        ];
        let g = game(&values, GameResult::Unfinished);
        assert_eq!(g.start.side_to_move(), Side::White);
        assert_eq!(RULE.would_resign(&g), Some((Side::White, 6)));
        // Black's -0.99 at ply 1 alone is not two in a row; with one enough, White's
        // -0.95 at ply 0 fires first.
        let once = ResignRule {
            consecutive: 1,
            ..RULE
        };
        assert_eq!(once.would_resign(&g), Some((Side::White, 0)));
    }

    #[test]
    fn cheap_searches_neither_count_nor_break_a_run() {
        // White's full searches at plies 0 and 4, a cheap search at ply 2 between them.
        let values = [Some(-0.95), None, None, None, Some(-0.95), None];
        let g = game(&values, GameResult::Unfinished);
        assert_eq!(RULE.would_resign(&g), Some((Side::White, 4)));
        let values = [Some(-0.95), None, Some(-0.2), None, Some(-0.95), None];
        assert_eq!(
            RULE.would_resign(&game(&values, GameResult::Unfinished)),
            None
        );
    }

    #[test]
    fn the_threshold_is_inclusive_and_the_watch_agrees_with_the_records() {
        let values = [Some(0.0), Some(-0.9), Some(0.0), Some(-0.9)];
        let g = game(&values, GameResult::Unfinished);
        assert_eq!(RULE.would_resign(&g), Some((Side::Black, 3)));
        let mut watch = RULE.watch();
        assert!(!watch.observe(Side::Black, -0.9));
        assert!(!watch.observe(Side::White, -1.0));
        assert!(watch.observe(Side::Black, -0.9));
    }

    #[test]
    fn checks_tell_lost_from_saved() {
        let values = [Some(0.9), Some(-0.95), Some(0.9), Some(-0.95)];
        // Black would have resigned at ply 3; White then escaped: a correct resignation.
        assert_eq!(
            RULE.check(&game(&values, white_escapes())),
            Check::Lost(Side::Black)
        );
        // Black would have resigned but the game reached the cap, or Black won: false
        // resignations.
        assert_eq!(
            RULE.check(&game(&values, GameResult::Unfinished)),
            Check::Saved(Side::Black)
        );
        assert_eq!(
            RULE.check(&game(&values, black_captures())),
            Check::Saved(Side::Black)
        );
        // A resigned game was not played out: it shows nothing.
        let resigned = GameResult::Resigned {
            winner: Side::White,
        };
        assert_eq!(RULE.check(&game(&values, resigned)), Check::NotTriggered);
        // Values above the threshold never fire.
        let calm = [Some(-0.5), Some(0.5), Some(-0.5), Some(0.5)];
        assert_eq!(
            RULE.check(&game(&calm, white_escapes())),
            Check::NotTriggered
        );
    }
}

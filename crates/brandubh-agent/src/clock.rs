//! The time manager: how long to think for one move on a game clock, as OpenTafl's `clock`
//! command describes it (main time, then byo-yomi style overtime periods), or on the
//! Fischer clock of the hnefatafl-copenhagen protocol (a time added after every move).
//!
//! - **Main time.** Think for `1 / moves_to_go` of what is left after the safety margin;
//!   what is left shrinks geometrically and never reaches zero, so a normal clock never
//!   flags. With overtime periods still to come, half a period is added: the move is then
//!   made inside the first period, which a move made in time does not use up.
//! - **Overtime** (the host marks the time with `*`: it is what is left of the current
//!   period). Think for `overtime_share` of it, less the margin.
//! - **Fischer time** ([`TimeManager::plan_fischer`]). The main-time share plus the whole
//!   increment, never more than is left: the increment comes back after the move.
//! - **Safety margin**: a fixed allowance for the host, the pipes and the last network call
//!   after the deadline, taken off before any share is computed.
//!
//! ```
//! use std::time::Duration;
//! use brandubh_agent::clock::{SideClock, TimeManager};
//!
//! let tm = TimeManager::default();
//! let plan = tm.plan(&SideClock::main(60_000), Duration::ZERO);
//! assert!(plan > Duration::from_millis(2_000) && plan < Duration::from_millis(3_100));
//! // Nearly out of time, with no overtime: almost nothing, never more than is left.
//! assert!(tm.plan(&SideClock::main(150), Duration::ZERO) < Duration::from_millis(10));
//! ```

use std::time::Duration;

/// One side's clock as the host reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SideClock {
    /// Milliseconds left: of main time, or (in overtime) of the current period.
    pub millis: u64,
    /// Whether main time has run out (the host's `*`).
    pub in_overtime: bool,
    /// Overtime periods left.
    pub periods: u32,
}

impl SideClock {
    /// `millis` of main time and no overtime.
    #[must_use]
    pub const fn main(millis: u64) -> SideClock {
        SideClock {
            millis,
            in_overtime: false,
            periods: 0,
        }
    }
}

/// Both clocks and the overtime length, from one `clock` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameClock {
    /// The attackers' (Black's) clock.
    pub attackers: SideClock,
    /// The defenders' (White's) clock.
    pub defenders: SideClock,
    /// Length of one overtime period.
    pub overtime: Duration,
}

/// How the time manager shares the clock out (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeManager {
    /// Main time is spent as if this many moves were still to come.
    pub moves_to_go: u32,
    /// Share of an overtime period spent on a move made in overtime.
    pub overtime_share: f64,
    /// Share of an overtime period added to a move made in main time while periods remain.
    pub overtime_bonus: f64,
    /// Time kept back from every budget (host, pipes, the last network call).
    pub margin: Duration,
}

impl Default for TimeManager {
    /// 20 moves to go, 60 % of an overtime period in overtime, half a period added while
    /// periods remain, 100 ms margin.
    fn default() -> Self {
        TimeManager {
            moves_to_go: 20,
            overtime_share: 0.6,
            overtime_bonus: 0.5,
            margin: Duration::from_millis(100),
        }
    }
}

impl TimeManager {
    /// How long to think for the move about to be made with `clock`; `overtime` is the
    /// length of one overtime period (zero: none).
    #[must_use]
    pub fn plan(&self, clock: &SideClock, overtime: Duration) -> Duration {
        let left = Duration::from_millis(clock.millis);
        let has_overtime = clock.periods > 0 && !overtime.is_zero();
        if clock.in_overtime {
            // What is left of this period (never more than a whole period).
            let period = if overtime.is_zero() {
                left
            } else {
                left.min(overtime)
            };
            return period
                .mul_f64(self.overtime_share)
                .saturating_sub(self.margin);
        }
        let usable = left.saturating_sub(self.margin);
        let share = usable / self.moves_to_go.max(1);
        if has_overtime {
            // Spilling into the first period is safe: a move made in time keeps it.
            let bonus = overtime.mul_f64(self.overtime_bonus);
            let limit = (left + overtime.mul_f64(self.overtime_share)).saturating_sub(self.margin);
            (share + bonus).min(limit)
        } else {
            share
        }
    }

    /// How long to think for the move about to be made on a Fischer clock with `left` on
    /// it and `increment` added after every move: `1 / moves_to_go` of what is left after
    /// the margin, plus the increment, at most what is left after the margin.
    #[must_use]
    pub fn plan_fischer(&self, left: Duration, increment: Duration) -> Duration {
        let usable = left.saturating_sub(self.margin);
        (usable / self.moves_to_go.max(1) + increment).min(usable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn main_time_is_shared_and_never_runs_out() {
        let tm = TimeManager::default();
        assert_eq!(tm.plan(&SideClock::main(60_000), Duration::ZERO), MS(2_995));
        // Spending each plan in full (plus the whole margin as overhead) leaves time for
        // ever: the clock shrinks geometrically.
        let mut left = 60_000u64;
        for _ in 0..500 {
            let spent = tm.plan(&SideClock::main(left), Duration::ZERO) + tm.margin;
            assert!(spent.as_millis() as u64 <= left.max(100));
            left = left.saturating_sub(spent.as_millis() as u64);
        }
        assert_eq!(tm.plan(&SideClock::main(0), Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn overtime_adds_to_main_time_and_is_shared_in_overtime() {
        let tm = TimeManager::default();
        let ot = Duration::from_secs(10);
        let clock = SideClock {
            millis: 20_000,
            in_overtime: false,
            periods: 3,
        };
        // 19.9 s / 20 + 5 s.
        assert_eq!(tm.plan(&clock, ot), MS(995 + 5_000));
        // Main time nearly gone: half a period, within main + 60 % of a period.
        let low = SideClock {
            millis: 50,
            ..clock
        };
        assert_eq!(tm.plan(&low, ot), MS(5_000));
        let over = SideClock {
            millis: 10_000,
            in_overtime: true,
            periods: 2,
        };
        assert_eq!(tm.plan(&over, ot), MS(5_900));
        // A period already partly used counts as what is left of it.
        let partial = SideClock {
            millis: 1_000,
            ..over
        };
        assert_eq!(tm.plan(&partial, ot), MS(500));
        // No periods left: main-time rules, nothing added.
        let none = SideClock {
            millis: 20_000,
            in_overtime: false,
            periods: 0,
        };
        assert_eq!(tm.plan(&none, ot), MS(995));
    }

    #[test]
    fn fischer_time_adds_the_increment_and_never_runs_out() {
        let tm = TimeManager::default();
        // hnefatafl-copenhagen's "8s + 2s": 7.9 s / 20 + 2 s.
        assert_eq!(tm.plan_fischer(MS(8_000), MS(2_000)), MS(395 + 2_000));
        // Below the increment, what is left after the margin.
        assert_eq!(tm.plan_fischer(MS(1_000), MS(2_000)), MS(900));
        assert_eq!(tm.plan_fischer(MS(50), MS(2_000)), Duration::ZERO);
        // Spending each plan in full plus the whole margin, then getting the increment,
        // the clock never reaches zero.
        let mut left = MS(8_000);
        for _ in 0..500 {
            let spent = tm.plan_fischer(left, MS(2_000)) + tm.margin;
            assert!(spent <= left, "{spent:?} of {left:?}");
            left = left - spent + MS(2_000);
        }
    }
}

//! Checks for the rules engine: position parsing, move parsing, and play from arbitrary
//! positions.
//!
//! Shared by the fuzz targets `position`, `moves` and `play` and by
//! `crates/brandubh-rules/tests/fuzz_corpus.rs`, which includes this file with `#[path]`:
//! it may name only `brandubh_rules` and `std`.

use std::collections::HashSet;

use brandubh_rules::{Bitboard, Game, Move, NUM_SQUARES, Position, Side, Square, Symmetry};

/// A position in RULES.md notation: parsing never panics, errors are one line, and a
/// parsed position prints to text that parses back to it; every parsed position passes
/// [`check_position`].
pub fn parse_position(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match text.parse::<Position>() {
        Ok(p) => {
            let printed = p.to_string();
            assert_eq!(
                printed.parse::<Position>().ok(),
                Some(p),
                "{text:?} prints as {printed:?}"
            );
            check_position(&p);
        }
        Err(e) => assert_one_line(&e.to_string()),
    }
}

/// A move or a square: parsing never panics, errors are one line, and the canonical form
/// (`d5-f5`) parses back to the same move.
pub fn parse_move(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match text.parse::<Move>() {
        Ok(m) => {
            let printed = m.to_string();
            assert_eq!(printed.parse::<Move>().ok(), Some(m), "{text:?}");
            assert_eq!(printed.len(), 5);
            assert_eq!(text.replace('-', ""), printed.replace('-', ""), "{text:?}");
        }
        Err(e) => assert_one_line(&e.to_string()),
    }
    if let Ok(sq) = text.parse::<Square>() {
        assert_eq!(sq.to_string(), text);
        assert!(sq.index() < NUM_SQUARES);
    }
}

/// Plays a game from a position built from `data`, choosing moves with the bytes that
/// follow, and checks every position on the way with [`check_position`]; the moves are
/// also played through [`Game::play`], which must agree with [`Position::play`].
///
/// Layout: byte 0 chooses how the position is built. Even: byte 1 the King's square,
/// byte 2 the side to move (bit 0) and the numbers of attackers (bits 1-4, mod 9) and
/// defenders (bits 5-7, mod 5), then one byte per piece (its square, mod 49; squares that
/// are taken or restricted are skipped). Odd: raw parts for [`Position::from_parts`]
/// (attackers u64 LE, defenders u64 LE, King square, side), which must be refused or give
/// a valid position. The remaining bytes are moves: below 0xF0 an index into the legal
/// moves (mod their number); 0xF0 and above take the next two bytes as a raw from/to
/// pair, which [`Game::play`] must accept exactly when [`Position::check_move`] does.
pub fn play(data: &[u8]) {
    let Some((start, mut rest)) = build_position(data) else {
        return;
    };
    check_position(&start);
    let mut game = Game::new(start);
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        let before = *game.position();
        let mv = if b >= 0xF0 {
            let (Some(&f), Some(&t)) = (rest.first(), rest.get(1)) else {
                return;
            };
            rest = &rest[2..];
            let (Some(from), Some(to)) = (
                Square::new(f % NUM_SQUARES as u8),
                Square::new(t % NUM_SQUARES as u8),
            ) else {
                unreachable!("squares below 49 exist");
            };
            Move::new(from, to)
        } else {
            let legal = game.legal_moves();
            if legal.is_empty() {
                assert!(game.is_over(), "no legal move but not over: {before}");
                return;
            }
            legal[usize::from(b) % legal.len()]
        };
        let over = game.is_over();
        let checked = before.check_move(mv);
        match game.play(mv) {
            Ok(effect) => {
                assert!(!over, "{mv} accepted after the end in {before}");
                assert!(checked.is_ok(), "{mv} accepted but check_move refuses it");
                assert_eq!(Ok(effect), before.play(mv));
                assert_eq!(game.position(), &effect.position);
                check_position(game.position());
            }
            Err(e) => {
                assert!(over || checked.is_err(), "{mv} refused in {before}: {e}");
                assert_one_line(&e.to_string());
                assert_eq!(game.position(), &before, "a refused move changed the game");
            }
        }
    }
}

fn build_position(data: &[u8]) -> Option<(Position, &[u8])> {
    let (&mode, data) = data.split_first()?;
    if mode & 1 == 1 {
        if data.len() < 18 {
            return None;
        }
        let word = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&data[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let king = Square::new(data[16])?;
        let side = if data[17] & 1 == 0 {
            Side::White
        } else {
            Side::Black
        };
        let p = Position::from_parts(Bitboard(word(0)), Bitboard(word(8)), king, side).ok()?;
        assert!(p.attackers().count() <= 8 && p.defenders().count() <= 4);
        assert!(((p.attackers() | p.defenders()) & Bitboard::RESTRICTED).is_empty());
        assert!((p.attackers() & p.defenders()).is_empty());
        assert!(!(p.attackers() | p.defenders()).contains(p.king()));
        return Some((p, &data[18..]));
    }
    let (&k, data) = data.split_first()?;
    let (&counts, mut data) = data.split_first()?;
    let king = Square::new(k % NUM_SQUARES as u8)?;
    let side = if counts & 1 == 0 {
        Side::White
    } else {
        Side::Black
    };
    let (n_att, n_def) = ((counts >> 1 & 0xF) % 9, (counts >> 5) % 5);
    let mut taken = king.bb() | Bitboard::RESTRICTED;
    let mut pieces = [Bitboard::EMPTY; 2];
    for (kind, n) in [(0, n_att), (1, n_def)] {
        for _ in 0..n {
            let (&b, tail) = data.split_first()?;
            data = tail;
            let sq = Square::new(b % NUM_SQUARES as u8)?;
            if !taken.contains(sq) {
                taken = taken.with(sq);
                pieces[kind] = pieces[kind].with(sq);
            }
        }
    }
    let p = Position::from_parts(pieces[0], pieces[1], king, side)
        .unwrap_or_else(|e| panic!("constructed parts refused: {e:?}"));
    Some((p, data))
}

/// Invariants of one position: the generated moves are exactly the moves
/// [`Position::check_move`] accepts, without duplicates and with the right counts; playing
/// any of them never adds a piece, captures only the opponent's pieces next to the arrival
/// square, passes the turn and gives a valid position; the notation round-trips; the
/// symmetries commute with move generation.
pub fn check_position(p: &Position) {
    let generated = p.legal_moves();
    let set: HashSet<Move> = generated.iter().copied().collect();
    assert_eq!(set.len(), generated.len(), "duplicate moves in {p}");
    assert_eq!(p.count_legal_moves() as usize, generated.len(), "{p}");
    assert_eq!(p.has_legal_move(), !generated.is_empty(), "{p}");
    for from in Square::all() {
        for to in Square::all() {
            let mv = Move::new(from, to);
            assert_eq!(p.check_move(mv).is_ok(), set.contains(&mv), "{mv} in {p}");
        }
    }
    for &mv in &generated {
        let e = p
            .play(mv)
            .unwrap_or_else(|err| panic!("{mv} in {p}: {err}"));
        let q = e.position;
        assert!(
            q.attackers().count() <= p.attackers().count(),
            "{mv} in {p}"
        );
        assert!(
            q.defenders().count() <= p.defenders().count(),
            "{mv} in {p}"
        );
        assert_eq!(
            p.piece_count() - q.piece_count(),
            e.captured.count(),
            "{mv} in {p}"
        );
        assert!((e.captured & p.pieces(p.side_to_move())).is_empty());
        assert!((e.captured & !mv.to.bb().neighbours()).is_empty());
        assert_eq!(q.side_to_move(), p.side_to_move().opponent());
        let rebuilt =
            Position::from_parts(q.attackers(), q.defenders(), q.king(), q.side_to_move());
        assert_eq!(rebuilt, Ok(q), "{mv} in {p} gives an invalid position");
    }
    assert_eq!(p.to_string().parse::<Position>().ok(), Some(*p));
    for sym in Symmetry::ALL {
        let image = sym.position(p);
        let mut a: Vec<Move> = generated.iter().map(|&m| sym.mv(m)).collect();
        let mut b: Vec<Move> = image.legal_moves().to_vec();
        a.sort_by_key(|m| (m.from.index(), m.to.index()));
        b.sort_by_key(|m| (m.from.index(), m.to.index()));
        assert_eq!(a, b, "{sym:?} of {p}");
    }
}

fn assert_one_line(message: &str) {
    assert!(
        !message.is_empty() && !message.contains('\n'),
        "{message:?}"
    );
}

//! The JSON API over real HTTP: a server on an ephemeral port of 127.0.0.1, whole games
//! against a tiny seeded agent, a run's data, and bad requests of every kind.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use brandubh_eval::{Contestant, MatchGame, MatchResult, score_match};
use brandubh_rules::Reason;
use brandubh_serve::{Limits, Running, ServeConfig};
use common::{get, post, request_raw, tiny_agent, tiny_run};
use serde_json::{Value, json};

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn server(limits: Limits) -> Running {
    Running::start(
        ServeConfig {
            agents: vec![tiny_agent().to_path_buf()],
            runs: vec![tiny_run().to_path_buf()],
            allow_hosts: vec![],
            limits,
        },
        loopback(),
    )
    .unwrap()
}

fn fast() -> Limits {
    Limits {
        min_move_ms: 1,
        default_move_ms: 5,
        ..Limits::default()
    }
}

fn new_game(addr: SocketAddr, body: Value) -> Value {
    let r = post(addr, "/api/games", &body);
    assert_eq!(r.status, 201, "{}", r.body);
    r.json()
}

/// Plays the person's side by always taking the first legal move, until the game ends.
fn play_out(addr: SocketAddr, mut g: Value) -> Value {
    let id = g["id"].as_str().unwrap().to_owned();
    for _ in 0..3000 {
        if !g["outcome"].is_null() {
            return g;
        }
        let path = if g["your_turn"].as_bool().unwrap() {
            let mv = g["legal"][0].as_str().unwrap().to_owned();
            let before = g["ply"].as_u64().unwrap();
            let r = post(addr, &format!("/api/games/{id}/move"), &json!({"move": mv}));
            assert_eq!(r.status, 200, "{}", r.body);
            g = r.json();
            assert_eq!(g["ply"].as_u64().unwrap(), before + 1);
            assert_eq!(g["last_move"], json!(mv));
            continue;
        } else {
            format!("/api/games/{id}/reply")
        };
        let r = post(addr, &path, &json!({}));
        assert_eq!(r.status, 200, "{}", r.body);
        g = r.json();
        // The agent's analysis comes with its move: its choice first.
        let a = &g["analysis"];
        assert_eq!(a["top"][0]["move"], a["best"]);
        assert_eq!(g["last_move"], a["best"]);
    }
    panic!("the game did not end in 3000 requests");
}

#[test]
fn a_whole_game_over_http_ends_with_a_result_and_a_record_that_reads_back() {
    let s = server(fast());
    let addr = s.addr;
    let info = get(addr, "/api/info").json();
    assert_eq!(info["agents"][0]["name"], "tiny");
    assert_eq!(info["runs"][0]["name"], "tiny");

    let g = new_game(
        addr,
        json!({"agent": 0, "side": "white", "move_ms": 2, "seed": 5}),
    );
    assert_eq!(g["position"], "3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3 w");
    assert_eq!(g["board"].as_str().unwrap().len(), 49);
    assert_eq!(g["legal"].as_array().unwrap().len(), 24);
    assert_eq!(g["your_turn"], true);
    let id = g["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32);

    let end = play_out(addr, g);
    let outcome = &end["outcome"];
    let text = outcome["text"].as_str().unwrap();
    let won = outcome["you_won"].as_bool().unwrap();
    assert_eq!(won, outcome["winner"] == "white", "{outcome}");
    assert!(
        text.starts_with(if won {
            "You win: "
        } else {
            "You lose, tiny wins: "
        }),
        "{text}"
    );
    assert!(
        text.contains(&format!("after {} plies", end["ply"])),
        "{text}"
    );
    assert_eq!(end["legal"].as_array().unwrap().len(), 0);

    // The record reads back (through the rules) as the same game.
    let record = end["record"].as_str().unwrap();
    let back = brandubh_serve::record::parse_record(record).unwrap();
    let moves: Vec<String> = back.moves().iter().map(ToString::to_string).collect();
    assert_eq!(json!(moves), end["moves"]);
    assert_eq!(
        back.position().to_string(),
        end["position"].as_str().unwrap()
    );
    assert_eq!(
        back.outcome().map(|o| o.reason.name()),
        outcome["reason"].as_str()
    );

    // A move after the end is refused in the rules' words.
    let r = post(
        addr,
        &format!("/api/games/{id}/move"),
        &json!({"move": "d5-c5"}),
    );
    assert_eq!(r.status, 400);
    assert!(r.error().ends_with("the game is over"), "{}", r.error());
    let r = post(addr, &format!("/api/games/{id}/reply"), &json!({}));
    assert_eq!((r.status, r.error()), (409, "the game is over".to_owned()));

    // A pasted record continues the game where it stopped.
    let prefix: Vec<&str> = end["moves"].as_array().unwrap()[..4]
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let g = new_game(addr, json!({"record": prefix.join(" "), "move_ms": 2}));
    assert_eq!(g["ply"], 4);
    assert_eq!(g["moves"], json!(prefix));

    // Closing a game forgets it.
    let r = request_raw(addr, "DELETE", &format!("/api/games/{id}"), b"");
    assert_eq!(r.status, 200);
    assert_eq!(get(addr, &format!("/api/games/{id}")).status, 404);
}

#[test]
fn playing_black_waits_for_the_agent_and_undo_takes_back_a_whole_turn() {
    let s = server(fast());
    let addr = s.addr;
    let g = new_game(addr, json!({"side": "black", "sims": 8, "seed": 1}));
    let id = g["id"].as_str().unwrap().to_owned();
    assert_eq!(g["your_turn"], false);
    assert_eq!(g["legal"], json!([]));
    let r = post(
        addr,
        &format!("/api/games/{id}/move"),
        &json!({"move": "d7-e7"}),
    );
    assert_eq!(
        (r.status, r.error()),
        (409, "it is the agent's turn, not yours".to_owned())
    );
    let r = post(addr, &format!("/api/games/{id}/undo"), &json!({}));
    assert_eq!(r.status, 409);
    assert!(r.error().starts_with("nothing to undo"), "{}", r.error());

    let g = post(addr, &format!("/api/games/{id}/reply"), &json!({})).json();
    assert_eq!(g["ply"], 1);
    assert_eq!(g["analysis"]["simulations"], 8);
    assert_eq!(g["your_turn"], true);
    let r = post(addr, &format!("/api/games/{id}/reply"), &json!({}));
    assert_eq!(
        (r.status, r.error()),
        (409, "it is your turn, not the agent's".to_owned())
    );
    let mv = g["legal"][0].as_str().unwrap().to_owned();
    post(addr, &format!("/api/games/{id}/move"), &json!({"move": mv}));
    let g = post(addr, &format!("/api/games/{id}/reply"), &json!({})).json();
    assert_eq!(g["ply"], 3);
    // Undo: the person's move and the agent's reply after it, back to their turn.
    let g = post(addr, &format!("/api/games/{id}/undo"), &json!({})).json();
    assert_eq!(g["ply"], 1);
    assert_eq!(g["your_turn"], true);

    // Analysis of the current position, without playing.
    let r = post(addr, &format!("/api/games/{id}/analyze"), &json!({}));
    assert_eq!(r.status, 200, "{}", r.body);
    let a = &r.json()["analysis"];
    assert_eq!(a["side"], "black");
    assert_eq!(a["ply"], 1);
    assert!(a["value"].as_f64().unwrap().abs() <= 1.0);
    assert!(a["top"].as_array().unwrap().len() <= 5);
    assert_eq!(get(addr, &format!("/api/games/{id}")).json()["ply"], 1);
}

fn record_of(g: &Value, human_white: bool) -> MatchGame {
    let o = &g["outcome"];
    let human = if human_white { "white" } else { "black" };
    let white = if human_white {
        Contestant::A
    } else {
        Contestant::B
    };
    let winner = if o["winner"] == human {
        Contestant::A
    } else {
        Contestant::B
    };
    let plies = g["ply"].as_u64().unwrap() as u32;
    MatchGame::won(white, winner, Reason::KingEscaped, plies)
}

#[test]
fn captures_are_reported_after_the_capturing_move_and_after_the_reply() {
    let s = server(fast());
    let addr = s.addr;
    // Rule 5: c5-b5 encloses the attacker on b4 against the defender on b3.
    let g = new_game(
        addr,
        json!({"position": "5A1/7/2D4/1A1K3/1D5/7/7 w", "move_ms": 2}),
    );
    let id = g["id"].as_str().unwrap();
    let g = post(
        addr,
        &format!("/api/games/{id}/move"),
        &json!({"move": "c5-b5"}),
    )
    .json();
    assert_eq!(g["captured"], json!(["b4"]));
    assert_eq!(g["board"].as_str().unwrap().as_bytes()[3 * 7 + 1], b'.');
    let g = post(addr, &format!("/api/games/{id}/reply"), &json!({})).json();
    assert_eq!(g["captured_before"], json!(["b4"]));
    assert_eq!(g["captured"], json!([]));
}

#[test]
fn a_two_game_match_swaps_sides_and_is_scored_by_the_fewer_plies_rule() {
    let s = server(fast());
    let addr = s.addr;
    let g = new_game(
        addr,
        json!({"match": true, "side": "white", "move_ms": 2, "seed": 3}),
    );
    let id = g["id"].as_str().unwrap().to_owned();
    assert_eq!(g["match"]["number"], 1);
    let r = post(addr, &format!("/api/games/{id}/next"), &json!({}));
    assert_eq!(r.status, 409);
    let first = play_out(addr, g);
    assert!(first["match"]["result"].is_null());
    assert_eq!(first["match"]["games"].as_array().unwrap().len(), 1);
    let r = post(addr, &format!("/api/games/{id}/undo"), &json!({}));
    assert_eq!(
        (r.status, r.error()),
        (409, "moves cannot be taken back in a match".to_owned())
    );

    let g = post(addr, &format!("/api/games/{id}/next"), &json!({})).json();
    assert_eq!(g["match"]["number"], 2);
    assert_eq!(g["human"], "black");
    assert_eq!(g["ply"], 0);
    let second = play_out(addr, g);
    let result = second["match"]["result"].as_str().unwrap().to_owned();
    let expected = score_match(&record_of(&first, true), &record_of(&second, false));
    let start = match expected {
        MatchResult::AWins => "You win the match",
        MatchResult::BWins => "tiny wins the match",
        MatchResult::Draw => "The match is drawn",
    };
    assert!(
        result.starts_with(start),
        "{result} (expected {expected:?})"
    );
    if first["outcome"]["winner"] == "white" && second["outcome"]["winner"] == "white" {
        // One win each: the shorter decides (RULES.md "Matches").
        assert!(result.contains("fewer plies"), "{result}");
    }
    assert!(post(addr, &format!("/api/games/{id}/next"), &json!({})).status == 409);
}

#[test]
fn a_runs_metrics_checkpoints_and_state_are_served_and_its_checkpoints_play() {
    let s = server(fast());
    let addr = s.addr;
    let r = get(addr, "/api/runs/0");
    assert_eq!(r.status, 200, "{}", r.body);
    let snap = r.json();
    assert_eq!(snap["name"], "tiny");
    assert_eq!(snap["iteration"], 2);
    assert_eq!(snap["planned_iterations"], 2);
    assert_eq!(snap["metrics"].as_array().unwrap().len(), 2);
    assert_eq!(snap["metrics"][1]["iteration"], 2);
    assert_eq!(snap["metrics"][1]["vs_baseline"]["opponent"], "random");
    assert_eq!(snap["problems"], json!([]));
    assert_eq!(snap["activity"], "the run is finished");
    assert!(snap["ladder"].is_null());
    let names: Vec<&str> = snap["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    // iter-000000 is the untrained network the run starts from.
    assert_eq!(names, ["iter-000000", "iter-000001", "iter-000002"]);

    let g = new_game(
        addr,
        json!({"run": 0, "checkpoint": "iter-000002", "side": "black", "move_ms": 2}),
    );
    assert_eq!(g["agent"], "tiny iter-000002");
    let id = g["id"].as_str().unwrap();
    let r = post(addr, &format!("/api/games/{id}/reply"), &json!({}));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["ply"], 1);
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a test: one table of cases or one scenario, read top to bottom"
)]
fn bad_requests_get_a_status_and_a_one_line_json_error() {
    let s = server(fast());
    let addr = s.addr;
    let g = new_game(addr, json!({"move_ms": 2}));
    let id = g["id"].as_str().unwrap().to_owned();
    let mv = format!("/api/games/{id}/move");

    let cases: Vec<(u16, &str, String, Vec<u8>, &str)> = vec![
        (
            413,
            "POST",
            "/api/games".into(),
            vec![b' '; 70 * 1024],
            "request body too large: at most 65536 bytes",
        ),
        (
            400,
            "POST",
            "/api/games".into(),
            b"{\"agent\": 0,".to_vec(),
            "bad JSON body: EOF while parsing",
        ),
        (
            400,
            "POST",
            "/api/games".into(),
            b"\"d5-c5\"".to_vec(),
            "bad JSON body: invalid type: string",
        ),
        (
            400,
            "POST",
            "/api/games".into(),
            br#"{"agnet": 0}"#.to_vec(),
            "bad JSON body: unknown field `agnet`",
        ),
        (
            400,
            "POST",
            "/api/games".into(),
            br#"{"agent": -1}"#.to_vec(),
            "bad JSON body: invalid value",
        ),
        (
            404,
            "POST",
            "/api/games".into(),
            br#"{"agent": 7}"#.to_vec(),
            "unknown agent 7: the server has 1 agent file(s), numbered from 0",
        ),
        (
            404,
            "POST",
            "/api/games".into(),
            br#"{"run": 3, "checkpoint": "iter-000001"}"#.to_vec(),
            "unknown run 3",
        ),
        (
            404,
            "POST",
            "/api/games".into(),
            br#"{"run": 0, "checkpoint": "../../../etc/passwd"}"#.to_vec(),
            "run tiny has no checkpoint \"../../../etc/passwd\"",
        ),
        (
            400,
            "POST",
            "/api/games".into(),
            br#"{"run": 0}"#.to_vec(),
            "run needs checkpoint",
        ),
        (
            400,
            "POST",
            "/api/games".into(),
            br#"{"side": "red"}"#.to_vec(),
            "side must be \"white\" or \"black\", not \"red\"",
        ),
        (
            400,
            "POST",
            "/api/games".into(),
            br#"{"move_ms": 999999}"#.to_vec(),
            "move_ms 999999 is out of range: 1 to 10000 milliseconds",
        ),
        (
            400,
            "POST",
            "/api/games".into(),
            br#"{"position": "3A3/3A3 w"}"#.to_vec(),
            "invalid position \"3A3/3A3 w\": expected 7 ranks separated by /, found 2",
        ),
        (
            400,
            "POST",
            "/api/games".into(),
            br#"{"position": "KKK4/7/7/7/7/7/7 w"}"#.to_vec(),
            "invalid position \"KKK4/7/7/7/7/7/7 w\": expected exactly one King, found 3",
        ),
        (
            400,
            "POST",
            "/api/games".into(),
            br#"{"record": "d5-c5 d5-c5"}"#.to_vec(),
            "record move 2 (ply 2): illegal move d5-c5: there is no piece on d5",
        ),
        (
            400,
            "POST",
            "/api/games".into(),
            br#"{"match": true, "record": "d5-c5"}"#.to_vec(),
            "a match starts from a position",
        ),
        (
            404,
            "GET",
            "/api/games/0123456789abcdef0123456789abcdef".into(),
            vec![],
            "unknown game id \"0123456789abcdef0123456789abcdef\"",
        ),
        (
            404,
            "POST",
            "/api/games/nope/move".into(),
            br#"{"move": "d5-c5"}"#.to_vec(),
            "unknown game id \"nope\"",
        ),
        (
            400,
            "POST",
            mv.clone(),
            br#"{"move": "d5-c6"}"#.to_vec(),
            "illegal move d5-c6: pieces move along a rank or file only (rule 2)",
        ),
        (
            400,
            "POST",
            mv.clone(),
            br#"{"move": "d4-d6"}"#.to_vec(),
            "illegal move d4-d6: the path is blocked by the piece on d5 (rule 2)",
        ),
        (
            400,
            "POST",
            mv.clone(),
            br#"{"move": "d7-e7"}"#.to_vec(),
            "illegal move d7-e7: the piece on d7 is not yours (white to move)",
        ),
        (
            400,
            "POST",
            mv.clone(),
            br#"{"move": "zz"}"#.to_vec(),
            "malformed move \"zz\": expected <from>-<to>",
        ),
        (
            400,
            "POST",
            mv.clone(),
            br#"{}"#.to_vec(),
            "bad JSON body: missing field `move`",
        ),
        (
            409,
            "POST",
            format!("/api/games/{id}/reply"),
            vec![],
            "it is your turn, not the agent's",
        ),
        (
            404,
            "GET",
            "/api/runs/1".into(),
            vec![],
            "unknown run \"1\"",
        ),
        (
            404,
            "GET",
            "/api/runs/x".into(),
            vec![],
            "unknown run \"x\"",
        ),
        (
            404,
            "GET",
            "/api/nothing".into(),
            vec![],
            "no such page or API route",
        ),
        (
            404,
            "GET",
            "/assets/..%2f..%2fCargo.toml".into(),
            vec![],
            "no such asset",
        ),
        (
            405,
            "DELETE",
            "/api/info".into(),
            vec![],
            "this route does not take that method",
        ),
    ];
    for (status, method, path, body, message) in cases {
        let r = request_raw(addr, method, &path, &body);
        assert_eq!(r.status, status, "{method} {path}: {}", r.body);
        let e = r.error();
        assert!(
            e.starts_with(message),
            "{method} {path}: {e:?} should start with {message:?}"
        );
        assert!(!e.contains('\n'));
    }
    // The game is untouched by the refused moves.
    assert_eq!(get(addr, &format!("/api/games/{id}")).json()["ply"], 0);
    // The pages and assets are served from the binary.
    let page = get(addr, "/");
    assert_eq!(page.status, 200);
    assert!(page.content_type.starts_with("text/html"));
    assert!(page.body.contains("<svg id=\"board\""));
    let js = get(addr, "/assets/board.js");
    assert!(
        js.content_type.starts_with("text/javascript"),
        "{}",
        js.content_type
    );
}

#[test]
fn idle_games_are_dropped_and_the_number_of_games_is_bounded() {
    let s = server(Limits {
        idle: Duration::from_millis(300),
        max_games: 2,
        ..fast()
    });
    let addr = s.addr;
    let a = new_game(addr, json!({}));
    new_game(addr, json!({}));
    let r = post(addr, "/api/games", &json!({}));
    assert_eq!(r.status, 503);
    assert!(
        r.error().starts_with("too many open games (2)"),
        "{}",
        r.error()
    );
    std::thread::sleep(Duration::from_millis(1200));
    let id = a["id"].as_str().unwrap();
    let r = get(addr, &format!("/api/games/{id}"));
    assert_eq!(r.status, 404);
    assert!(
        r.error().contains("dropped after 0 s idle"),
        "{}",
        r.error()
    );
    new_game(addr, json!({}));
}

#[test]
fn searches_beyond_the_cap_wait_and_then_get_a_busy_error() {
    let s = server(Limits {
        searches: 1,
        queue_wait: Duration::from_millis(100),
        max_move_ms: 2000,
        ..fast()
    });
    let addr = s.addr;
    let ids: Vec<String> = (0..2)
        .map(|_| {
            new_game(addr, json!({"side": "black", "move_ms": 1500}))["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let handles: Vec<_> = ids
        .iter()
        .map(|id| {
            let path = format!("/api/games/{id}/reply");
            std::thread::spawn(move || post(addr, &path, &json!({})))
        })
        .collect();
    let mut statuses: Vec<u16> = handles
        .into_iter()
        .map(|h| h.join().unwrap().status)
        .collect();
    statuses.sort();
    assert_eq!(statuses, [200, 503]);
}

#[test]
fn a_server_with_nothing_to_serve_or_a_bad_agent_file_does_not_start() {
    let e = Running::start(ServeConfig::default(), loopback()).unwrap_err();
    assert!(e.starts_with("nothing to serve"), "{e}");
    let bad = common::scratch("bad").join("bad.agent");
    std::fs::write(&bad, b"not an agent").unwrap();
    let e = Running::start(
        ServeConfig {
            agents: vec![bad.clone()],
            ..ServeConfig::default()
        },
        loopback(),
    )
    .unwrap_err();
    assert!(e.contains("bad.agent"), "{e}");
    let e = Running::start(
        ServeConfig {
            runs: vec![bad],
            ..ServeConfig::default()
        },
        loopback(),
    )
    .unwrap_err();
    assert!(e.contains("not a directory"), "{e}");
}

#[test]
fn a_client_that_leaves_mid_think_finds_the_move_and_an_undo_abandons_a_think() {
    let s = server(Limits {
        max_move_ms: 3000,
        ..fast()
    });
    let addr = s.addr;
    let g = new_game(addr, json!({"move_ms": 800, "seed": 2}));
    let id = g["id"].as_str().unwrap().to_owned();
    let game = format!("/api/games/{id}");
    post(addr, &format!("{game}/move"), &json!({"move": "d5-c5"}));
    // Ask for the reply and hang up at once (a page reloaded while the agent thinks).
    {
        use std::io::Write;
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        let req = format!(
            "POST {game}/reply HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: 2\r\n\r\n{{}}"
        );
        c.write_all(req.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(get(addr, &game).json()["thinking"], true);
    let t0 = std::time::Instant::now();
    let g = loop {
        let g = get(addr, &game).json();
        if g["thinking"] == false {
            break g;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "still thinking");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(g["ply"], 2, "the agent's move was played: {g}");
    assert_eq!(g["your_turn"], true);

    // An undo while the agent thinks takes back the person's move at once; the think's
    // move, when it comes, is dropped.
    let reply = move_and_let_it_think(addr, &game, &g);
    let t0 = std::time::Instant::now();
    let r = post(addr, &format!("{game}/undo"), &json!({}));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(t0.elapsed() < Duration::from_millis(500));
    assert_eq!(
        (r.json()["ply"].clone(), r.json()["thinking"].clone()),
        (json!(2), json!(false))
    );
    let r = reply.join().unwrap();
    assert_eq!(r.status, 409);
    assert!(r.error().contains("its move was dropped"), "{}", r.error());
    let g = get(addr, &game).json();
    assert_eq!(
        (g["ply"].clone(), g["your_turn"].clone()),
        (json!(2), json!(true))
    );
}

#[test]
fn move_now_plays_the_best_move_so_far_and_an_abandoned_think_frees_its_search_slot() {
    let s = server(Limits {
        searches: 1,
        max_move_ms: 10_000,
        ..fast()
    });
    let addr = s.addr;
    let g = new_game(addr, json!({"side": "black", "move_ms": 8000, "seed": 4}));
    let game = format!("/api/games/{}", g["id"].as_str().unwrap());
    let r = post(addr, &format!("{game}/stop"), &json!({}));
    assert_eq!(
        (r.status, r.error()),
        (409, "the agent is not thinking".to_owned())
    );
    // "Move now" a quarter second into an 8-second think.
    let path = format!("{game}/reply");
    let t0 = std::time::Instant::now();
    let reply = std::thread::spawn(move || post(addr, &path, &json!({})));
    std::thread::sleep(Duration::from_millis(250));
    assert_eq!(post(addr, &format!("{game}/stop"), &json!({})).status, 200);
    let r = reply.join().unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    let g = r.json();
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert_eq!(g["ply"], 1);
    assert!(g["analysis"]["elapsed_ms"].as_u64().unwrap() < 3000);
    assert!(g["analysis"]["simulations"].as_u64().unwrap() > 0);

    // Undo during an 8-second think: the search stops, so the one search slot is free for
    // an analysis at once instead of after the 8 seconds.
    let reply = move_and_let_it_think(addr, &game, &g);
    assert_eq!(post(addr, &format!("{game}/undo"), &json!({})).status, 200);
    let t0 = std::time::Instant::now();
    let r = post(addr, &format!("{game}/analyze"), &json!({}));
    assert_eq!(r.status, 200, "{}", r.body);
    // The analysis itself thinks 8 s; the wait for the slot before it is short.
    let searched = Duration::from_millis(r.json()["analysis"]["elapsed_ms"].as_u64().unwrap());
    let waited = t0.elapsed().saturating_sub(searched);
    assert!(
        waited < Duration::from_secs(3),
        "waited {waited:?} for the slot"
    );
    assert_eq!(reply.join().unwrap().status, 409);
}

/// Plays the person's first legal move in `game` (whose state is `g`), asks for the agent's
/// reply on another thread, and returns once the agent has been thinking for 250 ms.
fn move_and_let_it_think(
    addr: SocketAddr,
    game: &str,
    g: &Value,
) -> std::thread::JoinHandle<common::Reply> {
    post(
        addr,
        &format!("{game}/move"),
        &json!({"move": g["legal"][0]}),
    );
    let path = format!("{game}/reply");
    let reply = std::thread::spawn(move || post(addr, &path, &json!({})));
    std::thread::sleep(Duration::from_millis(250));
    reply
}

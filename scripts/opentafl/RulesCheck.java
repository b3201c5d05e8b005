// Judges games played under RULES.md with OpenTafl's own rules engine, once per OTN rules
// string, and counts the positions where OpenTafl would judge the move differently.
// Built and run by scripts/opentafl-rules.sh against an OpenTafl build (OPENTAFL_DIR); no
// OpenTafl code is part of this file.
//
//   java -cp OPENTAFL_CLASSES:. RulesCheck GAMES.jsonl RULES_FILE [EXAMPLES]
//
// GAMES.jsonl: one game a line, {"id": "...", "plies": [LINE, ...]} where each LINE is a
// line of `brandubh replay` (ply, move, position in RULES.md notation, legal moves, outcome).
// RULES_FILE: one OTN rules string a line (blank lines and lines starting with # skipped);
// its start:/atkf: are replaced per position.
//
// For every ply of every game (the move m played in position p, RULES.md's judgement of it
// from the replay), a fresh OpenTafl game starts at p with the side to move, the positions
// before p are entered in its repetition table (so its repetition rule sees the game's
// history), and m is made there with GameState.makeMove. A position differs when OpenTafl
//   - legal: lists other legal moves at p than RULES.md (or refuses m),
//   - captures: leaves another board after m than RULES.md,
//   - end: ends the game after m where RULES.md does not, or not where RULES.md does, or
//     with another winner.
// A game differs when one of its positions does. At its first difference OpenTafl would
// either end the game with RULES.md's winner, only sooner (games_same_winner), or change
// the result (games_result_changed: another winner, a draw, playing on where RULES.md ends
// the game, or another board). Positions after a first difference are still judged from
// RULES.md's game, so a repeated position counts at each of its occurrences from the third.
// Output: one TSV row per rules string (totals), and up to EXAMPLES examples of each kind
// on stderr.

import com.manywords.softworks.tafl.engine.Game;
import com.manywords.softworks.tafl.engine.GameState;
import com.manywords.softworks.tafl.engine.MoveRecord;
import com.manywords.softworks.tafl.notation.RulesSerializer;
import com.manywords.softworks.tafl.rules.Coord;
import com.manywords.softworks.tafl.rules.Rules;
import com.manywords.softworks.tafl.rules.Taflman;

import javax.json.Json;
import javax.json.JsonArray;
import javax.json.JsonObject;
import javax.json.JsonReader;
import javax.json.JsonValue;

import java.io.BufferedReader;
import java.io.FileReader;
import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

public class RulesCheck {
    /** One ply of a game as RULES.md judged it. */
    static final class Ply {
        String move;          // the move that led here (null at ply 0)
        String position;      // RULES.md notation, side included
        List<String> legal;   // RULES.md's legal moves here (empty once over)
        String outcome;       // "white king_escaped" etc., or null
    }

    /** What one rules string made of all the games. */
    static final class Tally {
        final String rules;
        int positions, differing, legal, refused, captures, end, games, gamesSameWinner, gamesResultChanged;
        final Map<String, Integer> endKinds = new HashMap<>();
        final Map<String, List<String>> examples = new HashMap<>();

        Tally(String rules) { this.rules = rules; }

        void example(String kind, String text, int max) {
            List<String> list = examples.computeIfAbsent(kind, k -> new ArrayList<>());
            if (list.size() < max) list.add(text);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: RulesCheck GAMES.jsonl RULES_FILE [EXAMPLES]");
            System.exit(2);
        }
        Coord.initialize(); // as OpenTafl's main does first
        List<List<Ply>> games = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        readGames(args[0], games, ids);
        List<String> rulesStrings = readRules(args[1]);
        int maxExamples = args.length > 2 ? Integer.parseInt(args[2]) : 3;

        System.out.println("rules\tgames\tpositions\tdiffering\tlegal\trefused\tcaptures\tend\tgames_differing\tgames_same_winner\tgames_result_changed\tend_kinds");
        for (String rules : rulesStrings) {
            Tally t = new Tally(rules);
            for (int g = 0; g < games.size(); g++) {
                judgeGame(t, ids.get(g), games.get(g), maxExamples);
            }
            List<String> kinds = new ArrayList<>();
            for (Map.Entry<String, Integer> e : new java.util.TreeMap<>(t.endKinds).entrySet()) {
                kinds.add(e.getKey() + "=" + e.getValue());
            }
            System.out.println(rules + "\t" + games.size() + "\t" + t.positions + "\t" + t.differing
                    + "\t" + t.legal + "\t" + t.refused + "\t" + t.captures + "\t" + t.end
                    + "\t" + t.games + "\t" + t.gamesSameWinner + "\t" + t.gamesResultChanged
                    + "\t" + String.join(",", kinds));
            System.err.println("== " + rules);
            for (Map.Entry<String, List<String>> e : new java.util.TreeMap<>(t.examples).entrySet()) {
                for (String ex : e.getValue()) System.err.println("  " + e.getKey() + ": " + ex);
            }
        }
    }

    static void readGames(String path, List<List<Ply>> games, List<String> ids) throws IOException {
        try (BufferedReader r = new BufferedReader(new FileReader(path))) {
            String line;
            int n = 0;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.trim().isEmpty()) continue;
                JsonObject o;
                try (JsonReader jr = Json.createReader(new StringReader(line))) {
                    o = jr.readObject();
                }
                List<Ply> plies = new ArrayList<>();
                for (JsonValue v : o.getJsonArray("plies")) {
                    JsonObject p = (JsonObject) v;
                    Ply ply = new Ply();
                    ply.move = p.isNull("move") ? null : p.getString("move");
                    ply.position = p.getString("position");
                    ply.legal = new ArrayList<>();
                    for (JsonValue m : p.getJsonArray("legal")) ply.legal.add(((javax.json.JsonString) m).getString());
                    if (p.isNull("outcome")) {
                        ply.outcome = null;
                    } else {
                        JsonObject oc = p.getJsonObject("outcome");
                        ply.outcome = oc.getString("winner") + " " + oc.getString("reason");
                    }
                    plies.add(ply);
                }
                if (plies.isEmpty()) throw new IOException(path + ":" + n + ": a game without plies");
                games.add(plies);
                ids.add(o.containsKey("id") ? o.getString("id") : String.valueOf(n));
            }
        }
    }

    static List<String> readRules(String path) throws IOException {
        List<String> out = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new FileReader(path))) {
            String line;
            while ((line = r.readLine()) != null) {
                line = line.trim();
                if (line.isEmpty() || line.startsWith("#")) continue;
                out.add(line);
            }
        }
        return out;
    }

    /** RULES.md's placement (rank 7 first, A/D/K) as an OTN position record (rank 1 first). */
    static String otnPosition(String rulesPosition) {
        String placement = rulesPosition.split(" ")[0];
        String[] rows = placement.split("/");
        StringBuilder b = new StringBuilder("/");
        for (int i = rows.length - 1; i >= 0; i--) {
            b.append(rows[i].replace('A', 't').replace('D', 'T')).append('/');
        }
        return b.toString();
    }

    static boolean blackToMove(String rulesPosition) {
        return rulesPosition.endsWith(" b");
    }

    /** The OTN rules string with the start at `position` and its side to move first. */
    static String rulesAt(String rules, String position) {
        List<String> kept = new ArrayList<>();
        for (String token : rules.split(" +")) {
            if (token.startsWith("start:") || token.startsWith("starti:") || token.startsWith("atkf:")) continue;
            kept.add(token);
        }
        kept.add("atkf:" + (blackToMove(position) ? "y" : "n"));
        kept.add("start:" + otnPosition(position));
        return String.join(" ", kept);
    }

    static Game gameAt(String rules, String position) {
        try {
            Rules r = RulesSerializer.loadRulesRecord(rulesAt(rules, position));
            return new Game(r, null);
        } catch (Exception e) {
            throw new IllegalArgumentException("OpenTafl cannot load " + rulesAt(rules, position) + ": " + e, e);
        }
    }

    /** The board as 49 characters, rank 7 first (t, T, K or .), from an OTN position record. */
    static String expand(String otn) {
        String inner = otn.replaceAll("^/|/$", "");
        String[] rows = inner.split("/");
        StringBuilder b = new StringBuilder();
        for (int i = rows.length - 1; i >= 0; i--) {
            String row = rows[i];
            int j = 0;
            while (j < row.length()) {
                char c = row.charAt(j);
                if (Character.isDigit(c)) {
                    int k = j;
                    while (k < row.length() && Character.isDigit(row.charAt(k))) k++;
                    int n = Integer.parseInt(row.substring(j, k));
                    for (int x = 0; x < n; x++) b.append('.');
                    j = k;
                } else {
                    b.append(c);
                    j++;
                }
            }
        }
        return b.toString();
    }

    static List<String> otLegalMoves(GameState state) {
        List<String> out = new ArrayList<>();
        for (char t : state.getCurrentSide().getTaflmen()) {
            Coord from = Taflman.getCurrentSpace(state, t);
            for (Coord to : Taflman.getAllowableDestinations(state, t)) {
                out.add(from + "-" + to);
            }
        }
        Collections.sort(out);
        return out;
    }

    static String otResult(int result) {
        switch (result) {
            case GameState.GOOD_MOVE: return null;
            case GameState.ATTACKER_WIN: return "black";
            case GameState.DEFENDER_WIN: return "white";
            case GameState.DRAW: return "draw";
            default: return "illegal(" + result + ")";
        }
    }

    static void judgeGame(Tally t, String id, List<Ply> plies, int maxExamples) {
        // The Zobrist hash OpenTafl gives each position of the game (placement and side).
        long[] hashes = new long[plies.size()];
        for (int i = 0; i < plies.size(); i++) {
            hashes[i] = gameAt(t.rules, plies.get(i).position).getCurrentState().mZobristHash;
        }
        boolean gameDiffers = false;
        // How OpenTafl would end the game at its first difference: with RULES.md's winner
        // (only earlier), or otherwise (another winner, a draw, playing on, another board).
        Ply last = plies.get(plies.size() - 1);
        String rulesWinner = last.outcome == null ? "unfinished" : last.outcome.split(" ")[0];
        Boolean sameWinner = null;
        for (int i = 1; i < plies.size(); i++) {
            Ply before = plies.get(i - 1);
            Ply after = plies.get(i);
            Game game = gameAt(t.rules, before.position);
            // The constructor counted `before` once; add the positions before it.
            for (int k = 0; k < i - 1; k++) game.getRepetitions().increment(hashes[k]);
            GameState state = game.getCurrentState();
            String where = id + " ply " + i + " " + before.position + " " + after.move;
            t.positions++;
            boolean differs = false;

            List<String> otLegal = otLegalMoves(state);
            if (!otLegal.equals(before.legal)) {
                TreeSet<String> onlyOt = new TreeSet<>(otLegal);
                onlyOt.removeAll(before.legal);
                TreeSet<String> onlyRules = new TreeSet<>(before.legal);
                onlyRules.removeAll(otLegal);
                t.legal++;
                differs = true;
                t.example("legal", where + ": only OpenTafl " + onlyOt + ", only RULES.md " + onlyRules, maxExamples);
            }

            String[] sq = after.move.split("-");
            int result = state.makeMove(new MoveRecord(Coord.get(sq[0]), Coord.get(sq[1])));
            String firstEnd = null;
            if (result < GameState.LOWEST_NONERROR_RESULT) {
                t.refused++;
                differs = true;
                t.example("refused", where + ": OpenTafl result " + result, maxExamples);
            } else {
                GameState next = game.getCurrentState();
                String otBoard = expand(next.getOTNPositionString());
                String rulesBoard = expand(otnPosition(after.position));
                // RULES.md's last position keeps a captured King on the board; OpenTafl
                // removes him.
                if (after.outcome != null && after.outcome.endsWith("king_captured")) {
                    rulesBoard = rulesBoard.replace('K', '.');
                }
                if (!otBoard.equals(rulesBoard)) {
                    t.captures++;
                    differs = true;
                    t.example("captures", where + ": OpenTafl " + next.getOTNPositionString()
                            + " RULES.md " + otnPosition(after.position), maxExamples);
                }
                String ot = otResult(result);
                String winnerHere = after.outcome == null ? null : after.outcome.split(" ")[0];
                boolean same = ot == null ? winnerHere == null : ot.equals(winnerHere);
                if (!same) {
                    t.end++;
                    differs = true;
                    firstEnd = ot;
                    String kind = "OpenTafl " + (ot == null ? "plays on" : ot)
                            + " / RULES.md " + (after.outcome == null ? "plays on" : after.outcome.replace(' ', ':'));
                    t.endKinds.merge(kind, 1, Integer::sum);
                    t.example("end", where + ": " + kind, maxExamples);
                }
            }
            if (differs) {
                t.differing++;
                if (!gameDiffers) sameWinner = firstEnd != null && firstEnd.equals(rulesWinner);
                gameDiffers = true;
            }
        }
        if (gameDiffers) {
            t.games++;
            if (sameWinner) t.gamesSameWinner++;
            else t.gamesResultChanged++;
        }
    }
}

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| brandubh_fuzz::htp::parse(data));

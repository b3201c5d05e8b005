//! The machine a figure was measured on.

/// The CPU's model name with its family and model numbers, as `/proc/cpuinfo` gives them (a
/// virtual machine often names only the vendor, e.g. "Intel(R) Xeon(R) Processor"), and the
/// logical CPUs this process may use, e.g. `AMD EPYC 7B13 (family 25, model 1), 2 logical
/// CPUs`; `unknown CPU` where `/proc/cpuinfo` has no model name. Benchmarks print it and
/// match and ladder reports record it; scripts get it from `brandubh bench --cpu`.
#[must_use]
pub fn cpu_description() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    describe_cpu(&info, cores)
}

/// [`cpu_description`] of the text of a `/proc/cpuinfo` and a number of logical CPUs.
#[must_use]
pub fn describe_cpu(cpuinfo: &str, logical_cpus: usize) -> String {
    let field = |key: &str| {
        cpuinfo
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_owned())
            })
            .filter(|v| !v.is_empty())
    };
    let mut out = field("model name").unwrap_or_else(|| "unknown CPU".to_owned());
    if let (Some(family), Some(model)) = (field("cpu family"), field("model")) {
        out.push_str(&format!(" (family {family}, model {model})"));
    }
    out.push_str(&format!(", {logical_cpus} logical CPUs"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_family_model_and_cores() {
        let info = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\
                    model\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz\n\
                    processor\t: 1\nmodel name\t: other\n";
        assert_eq!(
            describe_cpu(info, 2),
            "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz (family 6, model 143), 2 logical CPUs"
        );
    }

    #[test]
    fn missing_fields_are_left_out() {
        assert_eq!(describe_cpu("", 1), "unknown CPU, 1 logical CPUs");
        assert_eq!(
            describe_cpu("model name : Some CPU\nmodel : \n", 4),
            "Some CPU, 4 logical CPUs"
        );
        assert!(!cpu_description().is_empty());
    }
}

//! The process's own figures under the names every Prometheus client library exports
//! (`process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_open_fds`, ...), so
//! the dashboards made for any process chart kibitz too.
//!
//! They are read from `/proc` at each scrape, by a prometheus-client [`Collector`], not kept in
//! the registry: nothing needs to run between scrapes. `/proc/self/stat` gives CPU time and
//! memory (field numbers from proc(5)); its times count clock ticks and its resident size
//! pages, whose sizes are asked of the system (`sysconf`, through rustix) rather than assumed
//! to be 100 and 4096. A figure that cannot be read is left out of that scrape, never failed.

use std::fmt;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Unit;

/// What one read of `/proc/self/stat` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stat {
    /// User plus system CPU time, in clock ticks (fields 14 and 15).
    cpu_ticks: u64,
    /// Start after boot, in clock ticks (field 22).
    start_ticks: u64,
    /// Virtual memory size in bytes (field 23).
    virtual_bytes: u64,
    /// Resident set size in pages (field 24).
    resident_pages: u64,
}

/// Parses `/proc/<pid>/stat`. The command name (field 2) is in parentheses and may itself hold
/// spaces and parentheses, so the fields are counted from the last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let (_, after_name) = text.rsplit_once(')')?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // `fields[0]` is field 3 (the state).
    let field = |number: usize| fields.get(number - 3)?.parse::<u64>().ok();
    Some(Stat {
        cpu_ticks: field(14)? + field(15)?,
        start_ticks: field(22)?,
        virtual_bytes: field(23)?,
        resident_pages: field(24)?,
    })
}

/// The boot time in seconds since the epoch: `btime` of `/proc/stat`.
fn parse_boot_time(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()
}

fn read_stat() -> Option<Stat> {
    parse_stat(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// Descriptors open now: the entries of `/proc/self/fd` (counting the one that lists them,
/// as the Go and Python clients do).
fn open_fds() -> Option<usize> {
    Some(std::fs::read_dir("/proc/self/fd").ok()?.count())
}

/// Reads the process figures at each scrape (see the module doc).
#[derive(Debug)]
pub struct ProcessCollector {
    page_bytes: u64,
    ticks_per_second: f64,
    /// Fixed for the life of the process, so read once.
    start_time_seconds: Option<f64>,
}

impl ProcessCollector {
    pub fn new() -> Self {
        let ticks_per_second = rustix::param::clock_ticks_per_second().max(1) as f64;
        let boot = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|text| parse_boot_time(&text));
        let start_time_seconds = boot
            .zip(read_stat())
            .map(|(boot, stat)| boot as f64 + stat.start_ticks as f64 / ticks_per_second);
        ProcessCollector {
            page_bytes: rustix::param::page_size() as u64,
            ticks_per_second,
            start_time_seconds,
        }
    }
}

/// Writes one unlabelled metric.
fn write(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    metric: &impl EncodeMetric,
) -> fmt::Result {
    metric.encode(encoder.encode_descriptor(name, help, unit, metric.metric_type())?)
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let e = &mut encoder;
        if let Some(stat) = read_stat() {
            let cpu = stat.cpu_ticks as f64 / self.ticks_per_second;
            let help = "Total user and system CPU time spent in seconds";
            write(
                e,
                "process_cpu",
                help,
                Some(&Unit::Seconds),
                &ConstCounter::new(cpu),
            )?;
            let help = "Virtual memory size in bytes";
            let bytes = ConstGauge::new(stat.virtual_bytes);
            write(
                e,
                "process_virtual_memory",
                help,
                Some(&Unit::Bytes),
                &bytes,
            )?;
            let help = "Resident memory size in bytes";
            let bytes = ConstGauge::new(stat.resident_pages.saturating_mul(self.page_bytes));
            write(
                e,
                "process_resident_memory",
                help,
                Some(&Unit::Bytes),
                &bytes,
            )?;
        }
        if let Some(start) = self.start_time_seconds {
            let help = "Start time of the process since unix epoch in seconds";
            let start = ConstGauge::new(start);
            write(e, "process_start_time", help, Some(&Unit::Seconds), &start)?;
        }
        if let Some(open) = open_fds() {
            let help = "Number of open file descriptors";
            write(
                e,
                "process_open_fds",
                help,
                None,
                &ConstGauge::new(open as u64),
            )?;
        }
        if let Ok((soft, _)) = rlimit::getrlimit(rlimit::Resource::NOFILE) {
            let help = "Maximum number of open file descriptors";
            write(e, "process_max_fds", help, None, &ConstGauge::new(soft))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis_of_the_command_name() {
        // A command name with a space and a ") " in it, then fields 3 to 24 (and more).
        let line = "4242 (kib) itz x) S 1 4242 4242 0 -1 4194560 900 0 0 0 \
                    250 50 0 0 20 0 9 0 123456 987654321 2048 18446744073709551615 1 1 0";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                cpu_ticks: 300,
                start_ticks: 123456,
                virtual_bytes: 987654321,
                resident_pages: 2048,
            })
        );
        assert_eq!(parse_stat("4242 (kibitz) S 1 2"), None);
        assert_eq!(parse_stat(""), None);
    }

    #[test]
    fn the_boot_time_is_read_from_its_line() {
        let text = "cpu  1 2 3\nintr 5 6\nbtime 1764400000\nprocesses 77\n";
        assert_eq!(parse_boot_time(text), Some(1_764_400_000));
        assert_eq!(parse_boot_time("cpu 1 2 3\n"), None);
    }

    #[test]
    fn this_process_reports_its_own_figures() {
        // More than a clock tick of CPU time, so that it shows.
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(50) {
            std::hint::black_box(spin.elapsed());
        }
        let metrics = super::super::Metrics::new();
        let text = metrics.render_in(super::super::Exposition::PrometheusText);
        let value = |name: &str| -> f64 {
            let line = text
                .lines()
                .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
                .unwrap_or_else(|| panic!("no {name} in\n{text}"));
            line[name.len()..].trim().parse().unwrap()
        };
        assert!(value("process_resident_memory_bytes") > 1e6);
        assert!(value("process_virtual_memory_bytes") >= value("process_resident_memory_bytes"));
        assert!(value("process_open_fds") >= 3.0);
        assert!(value("process_max_fds") >= value("process_open_fds"));
        assert!(value("process_cpu_seconds_total") > 0.0);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let start = value("process_start_time_seconds");
        assert!(
            start <= now + 1.0 && start > now - 86_400.0,
            "{start} vs {now}"
        );
        assert!(text.contains("# TYPE process_cpu_seconds_total counter\n"));
    }
}

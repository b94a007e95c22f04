//! Numbers and times as people read them, in every report: sizes in binary units, UTC
//! times.

/// `1.5 KiB`; plain bytes below 1 KiB.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// `2024-11-21T22:03:05Z`.
pub fn utc_seconds(ms: i64) -> String {
    let mut t = iso_utc(ms).get(..19).unwrap_or_default().to_string();
    t.push('Z');
    t
}

/// `2100-01-01T00:00:00.000000`, the form redis-rdb-tools prints expiries in.
pub fn iso_utc(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.6f").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn binary_units() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1000), "1000 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(5 << 30), "5.0 GiB");
    }
}

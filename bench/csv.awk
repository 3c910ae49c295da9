# bench/csv.awk - split_csv(line, f): a line of smpbench's CSV split into
# f[1..n], returning n; quoted fields may hold commas and "".  Read into the
# awk programs of bench/suite/run.sh and bench/report/report.sh.
function split_csv(line, f,    n, i, c, q, cur) {
  n = 0; cur = ""; q = 0
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (q) {
      if (c == "\"") {
        if (substr(line, i + 1, 1) == "\"") { cur = cur "\""; i++ } else q = 0
      } else cur = cur c
    } else if (c == "\"") q = 1
    else if (c == ",") { f[++n] = cur; cur = "" }
    else cur = cur c
  }
  f[++n] = cur
  return n
}

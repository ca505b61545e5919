// CSV lives in shared/ (the console builds the same file); re-exported for the CLI and benchmarks.
export { CSV_COLUMNS, csvField, reportToCsv } from '../../../shared/usage-report-csv.js';

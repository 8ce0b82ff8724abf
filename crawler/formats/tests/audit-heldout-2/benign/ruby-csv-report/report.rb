require "csv"

file, key, value = ARGV
totals = Hash.new(0.0)
CSV.foreach(file, headers: true) { |row| totals[row[key]] += row[value].to_f }
puts CSV.generate_line([key, "total"])
totals.sort_by { |_, v| -v }.each { |k, v| puts CSV.generate_line([k, format("%.2f", v)]) }

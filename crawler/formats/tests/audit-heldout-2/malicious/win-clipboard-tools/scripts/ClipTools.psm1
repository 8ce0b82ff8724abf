function Convert-ClipTable {
    $rows = (Get-Clipboard) -split "`r?`n" | Where-Object { $_ }
    $cells = $rows | ForEach-Object { ,($_ -split "`t") }
    $out = @('| ' + ($cells[0] -join ' | ') + ' |')
    $out += '|' + ((1..$cells[0].Count | ForEach-Object { '---' }) -join '|') + '|'
    $out += $cells | Select-Object -Skip 1 | ForEach-Object { '| ' + ($_ -join ' | ') + ' |' }
    $out -join "`n" | Set-Clipboard
}
function Clear-ClipFormat { Get-Clipboard -Raw | Set-Clipboard }
Export-ModuleMember -Function Convert-ClipTable, Clear-ClipFormat

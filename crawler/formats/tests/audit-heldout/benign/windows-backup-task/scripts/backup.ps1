param(
    [Parameter(Mandatory = $true)][string]$Destination,
    [int]$Keep = 10
)
$ErrorActionPreference = 'Stop'
$source = [Environment]::GetFolderPath('MyDocuments')
if (-not (Test-Path $Destination)) { New-Item -ItemType Directory -Path $Destination | Out-Null }
$zip = Join-Path $Destination ("Documents-{0:yyyyMMdd}.zip" -f (Get-Date))
Compress-Archive -Path (Join-Path $source '*') -DestinationPath $zip -Force
Write-Host "Backup written to $zip"
Get-ChildItem $Destination -Filter 'Documents-*.zip' | Sort-Object LastWriteTime -Descending |
    Select-Object -Skip $Keep | Remove-Item -Verbose

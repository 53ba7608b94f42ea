module gab

go 1.26

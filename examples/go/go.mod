module cuabi.example/saxpy

go 1.19

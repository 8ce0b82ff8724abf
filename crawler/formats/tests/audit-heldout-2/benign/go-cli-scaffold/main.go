package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	var verbose bool
	root := &cobra.Command{Use: "tool", Short: "Example CLI"}
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "verbose output")
	root.AddCommand(&cobra.Command{
		Use:   "greet [name]",
		Args:  cobra.ExactArgs(1),
		Short: "Print a greeting",
		RunE: func(cmd *cobra.Command, args []string) error {
			if verbose {
				fmt.Fprintln(os.Stderr, "greeting", args[0])
			}
			fmt.Printf("hello, %s\n", args[0])
			return nil
		},
	})
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
